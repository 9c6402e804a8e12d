import type { PreviewInput } from "../../lib/network-preview/model";
import { previewGroup, type BridgeView } from "./group-preview";
import { planGroups } from "./plan/groups";
import type { ClaimChange, ControlPlaneView } from "./plan/model";

/**
 * Everything a connections preview gathers, ready for buildReport: the groups the change
 * touches (planned from the claims and the control plane), each previewed through the
 * bridge's own program, one after the other as the bridge runs them.
 */
export async function previewConnections(opts: {
  bridge: BridgeView;
  view: ControlPlaneView;
  claims: ClaimChange[];
  includePending: boolean;
  includeAll?: boolean;
  /** Consumer namespaces an environment change removes, or reaches at all. */
  namespaces?: { removed?: readonly string[]; affected?: readonly string[] };
  sources: PreviewInput["sources"];
  progress: (line: string) => void;
}): Promise<PreviewInput> {
  const groups = planGroups(opts.view, opts.claims, opts.includePending, opts.includeAll, opts.namespaces);
  const input: PreviewInput = { sources: opts.sources, connections: [], ports: [], notes: [] };
  for (const g of groups) {
    const r = await previewGroup(opts.bridge, g, opts.progress);
    input.connections.push(...r.connections);
    if (r.ports) input.ports?.push(r.ports);
    input.notes?.push(...r.notes);
  }
  if (groups.length === 0) input.notes?.push("no connection changes: nothing pending and no claims given");
  return input;
}
