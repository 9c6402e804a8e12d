import { pathId, proxyName } from "../../../lib/bridge/model";
import { admitConnections } from "../../../network/proxy/model/admission";
import { implementationSpec, realisationOf } from "../../../network/registry";
import type { ConnectionInput, PortGroupInput } from "../../../lib/network-preview/model";
import type { Endpoint, Hop } from "../../../lib/network-preview/schema";
import { toConnection } from "../../../network/proxy/model/target";
import type { BridgeTarget as Target } from "../../../network/contract/bridge-target";
import { consumerEndpoints, proxyHost } from "../../../network/proxy/model/haproxy-config";
import { listenerKey, type PortRange } from "../../../network/proxy/model/types";
import { toHop, type ResourceStep } from "./steps";
import type { GroupPlan } from "./model";
import { pendingId, pendingLabel } from "./groups";
import { portsDetail, predictPorts } from "./ports";

/** Ports the local proxy keeps for its own stats and health listeners (network/proxy/bridge-program.ts). */
const LOCAL_OWN_LISTENERS = ["~stats", "~health"];

/** A host the preview cannot know before `up` (a load balancer's address not yet assigned). */
const UNKNOWN_HOST = "unknown";

/**
 * Where consumers will dial a kubernetes-target group's proxy (TcpProxy's host, from
 * network/proxy/model/haproxy-config.ts proxyHost): the Service's DNS name for ClusterIP; for a
 * LoadBalancer the address its status holds now, unknown for a new one; for NodePort the
 * `--node-host` given or the node groupTarget picked as the bridge would now
 * (lib/bridge/node-host.ts), else unknown.
 */
function kubernetesHost(
  target: Extract<Target, { kind: "kubernetes" }>,
  name: string,
  steps: ResourceStep[],
): string {
  const serviceType = target.serviceType;
  if (serviceType === "ClusterIP") return proxyHost({ serviceName: name, namespace: target.namespace });
  if (serviceType === "LoadBalancer") {
    const service = steps.find((s) => s.name === `${name}-service`);
    const status = service?.op === "replace" ? undefined : service?.oldOutputs?.status;
    const ingress = (
      status as { loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] } } | undefined
    )?.loadBalancer?.ingress?.[0];
    return ingress?.ip || ingress?.hostname || UNKNOWN_HOST;
  }
  return target.nodeHost ?? UNKNOWN_HOST;
}

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
 * The report's connections and ports of one previewed group: the engine's steps of its
 * stack, read with the bridge's own planning (ports, WireGuard forwarders, admission), so
 * each connection shows the endpoint its consumers will dial after `up`.
 */
export function assemble(
  g: GroupPlan,
  steps: ResourceStep[],
  target: Target,
  implementation: string,
): { connections: ConnectionInput[]; ports?: PortGroupInput } {
  const range = target.portRange;
  const realisation = realisationOf(implementation);
  const namespace = g.key.slice(0, g.key.lastIndexOf("/"));
  // The group's PortAllocation: "ports" in the local program, `<proxy>-ports` inside TcpProxy.
  const proxy = proxyName(g.key);
  const portsStep = steps.find((s) => s.name === (target.kind === "local" ? "ports" : `${proxy}-ports`));
  const host = target.kind === "local" ? target.bindAddress : kubernetesHost(target, proxy, steps);
  const plan = realisation === "proxy" && g.after.length > 0 ? predictPorts(portsStep) : undefined;
  // A forwarded implementation predicts its own endpoints (its spec's planEndpoints).
  const forwarded = implementationSpec(implementation)?.planEndpoints?.(g.key, g.after, target);
  const proxied = admitConnections(g.after.map(toConnection));
  const admitted = proxied.admitted;
  // What the bridge refuses: its forwarded implementations' own rules, else the proxy's.
  const rejected: Record<string, { message: string }> = forwarded
    ? Object.fromEntries(
        g.after
          .map((p) => pathId(p))
          .flatMap((id) => {
            const message = forwarded.rejected[id] ?? forwarded.refusal;
            return message ? [[id, { message }]] : [];
          }),
      )
    : proxied.rejected;
  const after = new Map<string, Endpoint>();
  if (realisation === "proxy" && plan !== undefined) {
    if (plan === "unknown") {
      for (const c of admitted) after.set(c.id, { host, port: "unknown" });
    } else {
      const placed = admitted.filter((c) => plan.assignments[listenerKey(c)] !== undefined);
      const eps = consumerEndpoints(placed, plan.assignments, host);
      for (const [id, e] of Object.entries(eps)) after.set(id, { host: e.hostForConsumer, port: e.port });
    }
  } else if (forwarded) {
    // Forwarded: consumers dial the forwarder the group's plan gives each connection.
    for (const [id, e] of Object.entries(forwarded.endpoints))
      after.set(id, { host: e.hostForConsumer, port: e.port });
  } else if (realisation !== "proxy") {
    // Routed: consumers dial the instance itself.
    for (const p of g.after) after.set(pathId(p), { host: p.spec.instanceHost, port: p.spec.port });
  }
  ambiguousNewPorts(g, after);
  const groupHops = (id: string): Hop[] =>
    steps
      .filter((s) => !s.name.startsWith("probe-") || s.name === `probe-${id}`)
      .map((s) => toHop(s, s === portsStep ? portsDetail(s) : undefined));
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
    if (rejected[id]) broken.push(`the bridge refuses it: ${rejected[id].message}`);
    else if (plan !== undefined && plan !== "unknown" && !after.has(id))
      broken.push(`no port left in ${range.from}-${range.to}: the proxy leaves it out`);
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
  let ports: PortGroupInput | undefined;
  if (realisation === "proxy") {
    const before = (portsStep?.oldOutputs?.assignments ?? {}) as Record<string, number>;
    const oldRange = portsStep?.oldOutputs?.range as PortRange | undefined;
    ports = {
      group: g.key,
      ...(oldRange ? { rangeBefore: oldRange } : {}),
      rangeAfter: range,
      before: relabel(before, label),
      after: plan === undefined ? {} : plan === "unknown" ? "unknown" : relabel(plan.assignments, label),
      // TcpProxy keeps its stats and health ports outside the range; the local proxy inside it.
      ownPorts: target.kind === "local" ? LOCAL_OWN_LISTENERS.length : 0,
      ...(plan && plan !== "unknown" && plan.unplaced.length > 0
        ? { unplaced: plan.unplaced.map((u) => label.get(u) ?? u) }
        : {}),
    };
  }
  return { connections, ...(ports ? { ports } : {}) };
}
