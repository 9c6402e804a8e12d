import { pathId } from "../../../lib/bridge/model";
import { implementationSpec } from "../../../network/registry";
import type { ConnectionInput, PortGroupInput } from "../../../lib/network-preview/model";
import type { Endpoint, Hop } from "../../../lib/network-preview/schema";
import type { BridgeTarget as Target } from "../../../network/contract/bridge-target";
import type { PlannedEndpoints } from "../../../network/contract/preview";
import { toHop, type ResourceStep } from "./steps";
import type { GroupPlan } from "./model";
import { pendingId, pendingLabel } from "./groups";

/** Port assignments keyed by the report's names: a pending claim's label rather than its planned id. */
function relabel(m: Record<string, number>, label: Map<string, string>): Record<string, number> {
  return Object.fromEntries(Object.entries(m).map(([k, v]) => [label.get(k) ?? k, v]));
}

/**
 * New paths get ports in the order of their NetworkPath names, which Crossplane makes from
 * the claim name plus random suffixes. Claims whose names are not a prefix of one another
 * sort as their names do, so the plan holds; otherwise only the set of ports is known.
 */
function ambiguousNewPorts(g: GroupPlan, after: Map<string, Endpoint>): void {
  const names = g.added.map((c) => c.name);
  const ambiguous = g.added.filter((c) =>
    names.some((n) => n !== c.name && (n.startsWith(`${c.name}-`) || c.name.startsWith(`${n}-`))),
  );
  if (ambiguous.length < 2) return;
  const candidates = ambiguous
    .map((c) => after.get(pendingId(c))?.port)
    .filter((p): p is number => typeof p === "number")
    .sort((a, b) => a - b);
  for (const c of ambiguous) {
    const e = after.get(pendingId(c));
    if (e) after.set(pendingId(c), { host: e.host, port: "unknown", candidates });
  }
}

/**
 * Where consumers dial a group's paths when its implementation plans none (routed): the
 * instance itself, and the bridge refuses none of them.
 */
function instanceEndpoints(g: GroupPlan): PlannedEndpoints {
  return {
    endpoints: Object.fromEntries(
      g.after.map((p) => [pathId(p), { hostForConsumer: p.spec.instanceHost, port: p.spec.port }]),
    ),
    rejected: {},
  };
}

/**
 * The report's connections and ports of one previewed group: the engine's steps of its
 * stack, read with the planning of the group's implementation (its spec's planEndpoints: the
 * proxy's ports, WireGuard's forwarders, each one's admission), so each connection shows the
 * endpoint its consumers will dial after `up`.
 */
export function assemble(
  g: GroupPlan,
  steps: ResourceStep[],
  target: Target,
  implementation: string,
): { connections: ConnectionInput[]; ports?: PortGroupInput } {
  const namespace = g.key.slice(0, g.key.lastIndexOf("/"));
  const planned =
    implementationSpec(implementation)?.planEndpoints?.({ group: g.key, paths: g.after, target, steps }) ??
    instanceEndpoints(g);
  const after = new Map<string, Endpoint>();
  for (const [id, e] of Object.entries(planned.endpoints))
    after.set(id, { host: e.hostForConsumer, port: e.port });
  ambiguousNewPorts(g, after);
  const groupHops = (id: string): Hop[] =>
    steps
      .filter((s) => !s.name.startsWith("probe-") || s.name === `probe-${id}`)
      .map((s) => toHop(s, planned.stepDetails?.[s.name]));
  const connections: ConnectionInput[] = [];
  const label = new Map(g.added.map((c) => [pendingId(c), pendingLabel(c)]));
  for (const p of g.after) {
    const id = pathId(p);
    const before = g.before.find((b) => pathId(b) === id);
    const beforeEndpoint: Endpoint | undefined =
      before?.status?.hostForConsumer && typeof before.status.port === "number"
        ? { host: before.status.hostForConsumer, port: before.status.port }
        : undefined;
    const broken: string[] = [];
    const refused = planned.rejected[id] ?? planned.refusal;
    if (refused) broken.push(`the bridge refuses it: ${refused}`);
    else if (planned.broken?.[id]) broken.push(planned.broken[id]);
    const afterEndpoint = after.get(id);
    connections.push({
      id: label.get(id) ?? id,
      // A path that exists but was never realised is new to its consumers.
      change: before && beforeEndpoint ? "keep" : "add",
      implementation,
      consumer: { namespace },
      instance: { host: p.spec.instanceHost, port: p.spec.port },
      ...(beforeEndpoint ? { before: beforeEndpoint } : {}),
      ...(afterEndpoint ? { after: afterEndpoint } : {}),
      hops: groupHops(id),
      ...(broken.length > 0 ? { broken } : {}),
    });
  }
  for (const p of g.before.filter((b) => g.deletedIds.has(pathId(b)))) {
    const ep =
      p.status?.hostForConsumer && typeof p.status.port === "number"
        ? { host: p.status.hostForConsumer, port: p.status.port }
        : undefined;
    connections.push({
      id: pathId(p),
      change: "delete",
      implementation,
      consumer: { namespace },
      instance: { host: p.spec.instanceHost, port: p.spec.port },
      ...(ep ? { before: ep } : {}),
      hops: groupHops(pathId(p)),
    });
  }
  const plan = planned.ports;
  const ports: PortGroupInput | undefined = plan && {
    group: g.key,
    ...(plan.rangeBefore ? { rangeBefore: plan.rangeBefore } : {}),
    rangeAfter: plan.rangeAfter,
    before: relabel(plan.before, label),
    after: plan.after === "unknown" ? "unknown" : relabel(plan.after, label),
    ownPorts: plan.ownPorts,
    ...(plan.unplaced ? { unplaced: plan.unplaced.map((u) => label.get(u) ?? u) } : {}),
  };
  return { connections, ...(ports ? { ports } : {}) };
}
