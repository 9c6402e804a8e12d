import { groupKey, isDeleting, pathId, type NetworkPathObject } from "../../../lib/bridge/model";
import type { ClaimChange, ControlPlaneView, GroupPlan } from "./model";

/** A path the bridge has not realised yet: its generation is ahead of what the status reports. */
export function isPending(p: NetworkPathObject): boolean {
  return (
    isDeleting(p) ||
    p.status?.observedGeneration === undefined ||
    p.status.observedGeneration !== p.metadata.generation
  );
}

/** The id a not-yet-composed claim has in the planned group: its NetworkPath has no name yet. */
export const pendingId = (c: ClaimChange): string => `${c.name}-pending`;

/** How the report names a not-yet-composed claim, so it is not mistaken for a real path id. */
export const pendingLabel = (c: ClaimChange): string => `pending:${c.namespace}/${c.name}`;

/**
 * The groups a change touches, each with its paths before and after: claims in the file
 * are matched to their NetworkPath through the claim's XR; pending paths on the control
 * plane (generation not yet realised) are previewed as they stand.
 */
export function planGroups(
  view: ControlPlaneView,
  claims: ClaimChange[],
  includePending: boolean,
  includeAll = false,
  namespaces: { removed?: readonly string[]; affected?: readonly string[] } = {},
): GroupPlan[] {
  const byXr = new Map(view.paths.map((p) => [p.spec.connection, p]));
  const groups = new Map<string, GroupPlan>();
  const group = (key: string): GroupPlan => {
    let g = groups.get(key);
    if (!g) {
      const before = view.paths.filter((p) => groupKey(p) === key);
      g = { key, before, after: before.filter((p) => !isDeleting(p)), added: [], deletedIds: new Set() };
      for (const p of before.filter(isDeleting)) g.deletedIds.add(pathId(p));
      groups.set(key, g);
    }
    return g;
  };
  if (includePending) for (const p of view.paths.filter(isPending)) group(groupKey(p));
  // Every group: what a change of the bridge's own settings (its port range) does to all of them.
  if (includeAll) for (const p of view.paths) group(groupKey(p));
  // The environment change reaches these namespaces' groups; a removed one loses every path,
  // as Kubernetes deletes the claims with their namespace and Crossplane their NetworkPaths.
  const removed = new Set(namespaces.removed ?? []);
  const nsOf = (p: NetworkPathObject) => groupKey(p).slice(0, groupKey(p).lastIndexOf("/"));
  for (const p of view.paths.filter((x) => (namespaces.affected ?? []).includes(nsOf(x)))) group(groupKey(p));
  for (const p of view.paths.filter((x) => removed.has(nsOf(x)))) {
    const g = group(groupKey(p));
    g.after = g.after.filter((x) => pathId(x) !== pathId(p));
    g.deletedIds.add(pathId(p));
  }
  for (const c of claims.filter((x) => !removed.has(x.namespace))) {
    const xr = view.claimXr.get(`${c.namespace}/${c.name}`);
    const existing = xr ? byXr.get(xr) : undefined;
    const key = existing ? groupKey(existing) : `${c.namespace}/${c.implementation}`;
    const g = group(key);
    if (existing && c.action === "delete") {
      g.after = g.after.filter((p) => pathId(p) !== pathId(existing));
      g.deletedIds.add(pathId(existing));
    } else if (existing) {
      g.after = g.after.map((p) =>
        pathId(p) === pathId(existing)
          ? {
              ...p,
              spec: {
                ...p.spec,
                instanceHost: c.instanceHost,
                port: c.port,
                ...(c.enhancements ? { enhancements: c.enhancements } : {}),
              },
            }
          : p,
      );
    } else if (c.action === "apply") {
      g.added.push(c);
      g.after.push({
        metadata: { name: pendingId(c), generation: 1 },
        spec: {
          implementation: c.implementation,
          connection: `${c.name}-pending`,
          consumerNamespace: c.namespace,
          instanceHost: c.instanceHost,
          port: c.port,
          ...(c.enhancements ? { enhancements: c.enhancements } : {}),
        },
      });
    }
  }
  return [...groups.values()].sort((a, b) => (a.key < b.key ? -1 : 1));
}
