import { pathId, proxyName, type NetworkPathObject } from "../../../lib/bridge/model";
import type { KubernetesTarget } from "../../contract/implementation";
import type { PlannedEndpoints, PreviewGroup, PreviewStep } from "../../contract/preview";
import { admitConnections } from "./admission";
import { consumerEndpoints, proxyHost } from "./haproxy-config";
import { backendKey, instanceTargetOf } from "./kernel-path";
import { portsDetail, predictPorts } from "./port-prediction";
import { toConnection } from "./target";
import { listenerKey, listenerKeys, type PortRange } from "./types";

/**
 * The proxy's side of the network preview (network/contract/preview.ts): where its bridge
 * program (../bridge-program.ts) will place each path, read from the group stack's previewed
 * PortAllocation with the allocation's own planner, and the ports the bridge gives a group.
 */

/** The local proxy's own stats and health listeners, inside its range (../bridge-program.ts). */
const LOCAL_OWN_LISTENERS = ["~stats", "~health"];

/** A host the preview cannot know before `up` (a load balancer's address not yet assigned). */
const UNKNOWN_HOST = "unknown";

/** The ports a local group's proxy holds: one per listener of its admitted connections, plus its own two. */
export function proxyLocalPorts(paths: readonly NetworkPathObject[]): number {
  return listenerKeys(admitConnections(paths.map(toConnection)).admitted).length + LOCAL_OWN_LISTENERS.length;
}

/**
 * Where consumers will dial a kubernetes-target group's proxy (TcpProxy's host, proxyHost):
 * the Service's DNS name for ClusterIP; for a LoadBalancer the address its status holds now,
 * unknown for a new one; for NodePort the node the target names (`--node-host`, or the one the
 * preview picked as the bridge would), else unknown.
 */
function kubernetesHost(target: KubernetesTarget, name: string, steps: readonly PreviewStep[]): string {
  if (target.serviceType === "ClusterIP")
    return proxyHost({ serviceName: name, namespace: target.namespace });
  if (target.serviceType === "LoadBalancer") {
    const service = steps.find((s) => s.name === `${name}-service`);
    const status = service?.op === "replace" ? undefined : service?.oldOutputs?.status;
    const ingress = (
      status as { loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] } } | undefined
    )?.loadBalancer?.ingress?.[0];
    return ingress?.ip || ingress?.hostname || UNKNOWN_HOST;
  }
  return target.nodeHost ?? UNKNOWN_HOST;
}

/** The group's endpoints, refusals and port plan after `up`, as its bridge program will make them. */
export function planProxyEndpoints({ group, paths, target, steps }: PreviewGroup): PlannedEndpoints {
  const proxy = proxyName(group);
  // The group's PortAllocation: "ports" in the local program, `<proxy>-ports` inside TcpProxy.
  const portsName = target.kind === "local" ? "ports" : `${proxy}-ports`;
  const portsStep = steps.find((s) => s.name === portsName);
  const host = target.kind === "local" ? target.bindAddress : kubernetesHost(target, proxy, steps);
  const plan = paths.length > 0 ? predictPorts(portsStep) : undefined;
  const { admitted, rejected } = admitConnections(paths.map(toConnection));
  const endpoints: PlannedEndpoints["endpoints"] = {};
  const broken: Record<string, string> = {};
  if (plan === "unknown") {
    for (const c of admitted) endpoints[c.id] = { hostForConsumer: host, port: "unknown" };
  } else if (plan !== undefined) {
    const placed = admitted.filter((c) => plan.assignments[listenerKey(c)] !== undefined);
    Object.assign(endpoints, consumerEndpoints(placed, plan.assignments, host));
    const range = target.portRange;
    for (const p of paths) {
      const id = pathId(p);
      if (!rejected[id] && !endpoints[id])
        broken[id] = `no port left in ${range.from}-${range.to}: the proxy leaves it out`;
    }
  }
  const detail = portsStep ? portsDetail(portsStep) : undefined;
  return {
    endpoints,
    rejected: Object.fromEntries(Object.entries(rejected).map(([id, r]) => [id, r.message])),
    ...(Object.keys(broken).length > 0 ? { broken } : {}),
    ports: {
      ...(portsStep?.oldOutputs?.range ? { rangeBefore: portsStep.oldOutputs.range as PortRange } : {}),
      rangeAfter: target.portRange,
      before: (portsStep?.oldOutputs?.assignments ?? {}) as Record<string, number>,
      after: plan === undefined ? {} : plan === "unknown" ? "unknown" : plan.assignments,
      // TcpProxy keeps its stats and health ports outside the range; the local proxy inside it.
      ownPorts: target.kind === "local" ? LOCAL_OWN_LISTENERS.length : 0,
      ...(plan && plan !== "unknown" && plan.unplaced.length > 0 ? { unplaced: plan.unplaced } : {}),
    },
    ...(detail ? { stepDetails: { [portsName]: detail } } : {}),
  };
}

/** TEST-NET-1 (RFC 5737): never routed, so a stand-in can never be mistaken for an instance. */
const STAND_IN = "192.0.2.1";

/**
 * A kernel path's EndpointSlices name its instances' ready endpoints, which the bridge reads
 * before each run (../instance-backends.ts) and the preview does not: each instance Service a
 * path names stands in with one TEST-NET address, so the preview shows the Service's port and
 * one slice per path, and says so.
 */
export function withStandInBackends(
  target: KubernetesTarget,
  paths: readonly NetworkPathObject[],
  note: (line: string) => void,
): KubernetesTarget {
  if (target.hop !== "kernel" || target.backends) return target;
  const backends: NonNullable<KubernetesTarget["backends"]> = {};
  for (const c of admitConnections(paths.map(toConnection)).admitted) {
    if (instanceTargetOf(c.instanceHost).kind !== "service") continue;
    backends[backendKey(c.instanceHost, c.port)] = { backends: [{ address: STAND_IN, port: c.port }] };
  }
  if (Object.keys(backends).length > 0)
    note(
      `a kernel path; its EndpointSlices show ${STAND_IN} for each instance Service, whose ready endpoints the bridge reads when it runs`,
    );
  return { ...target, backends };
}
