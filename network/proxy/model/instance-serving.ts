import type { NetworkPathObject } from "../../../lib/bridge/model";
import type { PathHealth } from "../../contract/implementation";
import { admitConnections } from "./admission";
import {
  instanceTargetOf,
  slicePortNamed,
  tcpServicePort,
  type EndpointSliceLike,
  type InstanceServiceLike,
} from "./kernel-path";
import { toConnection } from "./target";

/**
 * Whether kube-proxy sends a Service port's traffic anywhere, from the Service and its
 * EndpointSlices. Pure. The rule is kube-proxy's own (k8s.io/kubernetes v1.37.2
 * pkg/proxy/topology.go CategorizeEndpoints; endpointslicecache.go reads the conditions): it uses
 * the Ready endpoints, or, when none is Ready, those both Serving and Terminating; Ready and
 * Serving unset mean true, Terminating unset false. With none of either it rejects connections
 * to the ClusterIP. HAProxy's health checks find that too, but only after up to `inter` and
 * `fall` checks, some of which hang on the deleted pod's address; the endpoints say it within
 * a second of the pod's deletion, so the proxy's reader asks both (network/proxy/path-health.ts).
 */

/** A Service's name and namespace, as a path's instanceHost names it. */
export interface ServiceRef {
  namespace: string;
  name: string;
}

/**
 * Why connections to `port` of the Service are refused now, or undefined when kube-proxy has
 * an endpoint for them or this cannot tell: no such Service (the host does not resolve, which
 * HAProxy reports), an ExternalName or headless Service (no kube-proxy rules), no such port.
 */
export function unservedProblem(
  ref: ServiceRef,
  port: number,
  service: InstanceServiceLike,
  slices: readonly EndpointSliceLike[],
): string | undefined {
  if (service.spec?.type === "ExternalName" || service.spec?.clusterIP === "None") return undefined;
  const servicePort = tcpServicePort(service, port);
  if (!servicePort) return undefined;
  const name = servicePort.name ?? "";
  const endpoints = slices.filter((s) => slicePortNamed(s, name)).flatMap((s) => s.endpoints ?? []);
  const ready = endpoints.some((e) => e.conditions?.ready !== false);
  const servingTerminating = endpoints.some(
    (e) => e.conditions?.serving !== false && e.conditions?.terminating === true,
  );
  if (ready || servingTerminating) return undefined;
  return `Service ${ref.namespace}/${ref.name} has no ready endpoint for port ${port}, so connections to it are refused: the instance's pods are not Ready (deleted, restarting, or failing their readiness probe)`;
}

/** The Services a group's admitted paths name, each with the ids and ports of its paths. */
export function instanceServices(
  live: readonly NetworkPathObject[],
  clusterDomain?: string,
): Map<string, { ref: ServiceRef; paths: { id: string; port: number }[] }> {
  const out = new Map<string, { ref: ServiceRef; paths: { id: string; port: number }[] }>();
  for (const c of admitConnections(live.map(toConnection)).admitted) {
    const target = instanceTargetOf(c.instanceHost, clusterDomain);
    if (target.kind !== "service") continue;
    const key = `${target.namespace}/${target.name}`;
    const entry = out.get(key) ?? { ref: { namespace: target.namespace, name: target.name }, paths: [] };
    entry.paths.push({ id: c.id, port: c.port });
    out.set(key, entry);
  }
  return out;
}

/**
 * HAProxy's verdicts with the endpoints' added: a path whose Service has no endpoint is not
 * Ready whatever HAProxy's last check said, and the endpoints' message, which names the cause,
 * replaces HAProxy's failing checks (whichever of the two a poll sees first, the path says the
 * same). Only ProxyUnavailable stands: the path's own pods are missing, which the bridge heals.
 * A path the endpoints say nothing of keeps HAProxy's verdict (or none). Back to Ready takes
 * both: HAProxy's checks pass once the instance serves again.
 */
export function withUnserved(
  haproxy: Record<string, PathHealth>,
  unserved: Record<string, string>,
): Record<string, PathHealth> {
  const out = { ...haproxy };
  for (const [id, message] of Object.entries(unserved))
    if (out[id]?.reason !== "ProxyUnavailable")
      out[id] = { ready: false, reason: "InstanceUnreachable", message };
  return out;
}
