import { isIpv4 } from "../../lib/net/cidr";
import type { PathHealth } from "./implementation";

/**
 * What a path's instance host names, and whether kube-proxy sends its traffic anywhere: pure,
 * shared by the proxy (its kernel hop follows a Service's endpoints, its health reader says at
 * once that an instance has none) and WireGuard (its gateway forwards to the Service's ClusterIP,
 * which kube-proxy routes only to those endpoints).
 */

/** Where an instance host points: an address, a Service of the data-service cluster, or neither. */
export type InstanceTarget =
  | { kind: "address"; address: string }
  | { kind: "service"; namespace: string; name: string }
  | { kind: "unsupported"; problem: string };

const LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * The instance a connection's `instanceHost` names. A kernel path cannot forward to a DNS name
 * (kube-proxy forwards to endpoint addresses), and an EndpointSlice cannot hold another
 * Service's ClusterIP ("Services without selectors" in the Kubernetes docs: kube-proxy does not
 * support virtual IPs as a destination). So a Service's name (`<svc>.<ns>.svc.<domain>`, as
 * a8s's `instance_service` and the local backend give it) is followed to its endpoints, and an
 * IPv4 address is taken as the instance's own (a pod's or a VM's), never a Service's.
 */
export function instanceTargetOf(host: string, clusterDomain = "cluster.local"): InstanceTarget {
  // (A plain boolean: the type guard would narrow `host` to never below.)
  const address: boolean = isIpv4(host);
  if (address) return { kind: "address", address: host };
  const parts = host.toLowerCase().replace(/\.$/, "").split(".");
  const [name, namespace, svc, ...domain] = parts;
  const domainOk = domain.length === 0 || domain.join(".") === clusterDomain;
  if (name && namespace && svc === "svc" && domainOk && LABEL.test(name) && LABEL.test(namespace)) {
    return { kind: "service", namespace, name };
  }
  return {
    kind: "unsupported",
    problem: `instanceHost ${JSON.stringify(host)} is neither an IPv4 address nor a Service's name (<service>.<namespace>.svc.${clusterDomain}); the kernel hop forwards to addresses only (kube-proxy resolves no names), so give the instance's Service name or address, or use the haproxy hop`,
  };
}

/** What the bridge reads of the instance's Service (core/v1). */
export interface InstanceServiceLike {
  spec?: {
    type?: string;
    /** "None" for a headless Service. */
    clusterIP?: string;
    ports?: { name?: string; port: number; protocol?: string }[];
  };
}

/** What the bridge reads of each of its EndpointSlices (discovery.k8s.io/v1). */
export interface EndpointSliceLike {
  addressType?: string;
  endpoints?:
    | {
        addresses?: string[];
        conditions?: { ready?: boolean | null; serving?: boolean | null; terminating?: boolean | null };
      }[]
    | null;
  ports?: { name?: string | null; port?: number | null; protocol?: string | null }[] | null;
}

/** The Service's TCP port of that number. */
export function tcpServicePort(
  service: InstanceServiceLike,
  port: number,
): NonNullable<NonNullable<InstanceServiceLike["spec"]>["ports"]>[number] | undefined {
  return (service.spec?.ports ?? []).find((p) => p.port === port && (p.protocol ?? "TCP") === "TCP");
}

/** A slice's TCP port that carries the Service port's name: kube-proxy matches the two by name. */
export function slicePortNamed(
  slice: EndpointSliceLike,
  name: string,
): NonNullable<EndpointSliceLike["ports"]>[number] | undefined {
  return (slice.ports ?? []).find((p) => (p.name ?? "") === name && (p.protocol ?? "TCP") === "TCP");
}

/**
 * Whether a Service port's traffic reaches an instance that takes new connections, from the
 * Service and its EndpointSlices. Pure. kube-proxy (k8s.io/kubernetes v1.37.2
 * pkg/proxy/topology.go CategorizeEndpoints; endpointslicecache.go reads the conditions) uses the
 * Ready endpoints, or, when none is Ready, those both Serving and Terminating; Ready unset means
 * true, Terminating unset false. With neither it rejects connections to the ClusterIP.
 *
 * Its fallback does not make a path usable: a Terminating endpoint is a pod being deleted, and
 * a data service refuses new connections from the moment it is told to stop (PostgreSQL's docs,
 * "Shutting Down the Server": after SIGTERM "the server disallows new connections"; MariaDB,
 * MongoDB, Valkey and RabbitMQ shut down on SIGTERM too). So only Ready endpoints count here; the
 * deletion marks them Terminating within a second, before the container has even stopped, and
 * the bridge reads that on the EndpointSlice watch's event (programs/bridge/instance-watch.ts).
 * HAProxy's health checks find the loss too, but only after up to `inter` and `fall` checks,
 * so the proxy's reader asks both (network/proxy/path-health.ts).
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
  if (endpoints.some((e) => e.conditions?.ready !== false)) return undefined;
  const draining = endpoints.some(
    (e) => e.conditions?.serving !== false && e.conditions?.terminating === true,
  );
  const start = `Service ${ref.namespace}/${ref.name} has no ready endpoint for port ${port}`;
  return draining
    ? `${start}, only terminating ones: the instance's pods are being deleted, and a data service refuses new connections while it shuts down`
    : `${start}, so connections to it are refused: the instance's pods are not Ready (deleted, restarting, or failing their readiness probe)`;
}

/**
 * Health verdicts with the endpoints' added: a path whose Service has no endpoint is not Ready
 * (`InstanceUnreachable`) whatever the implementation's own check said last, and the endpoints'
 * message, which names the cause, replaces it. Only `keep` stands (the path's own pods are
 * missing, which the bridge heals first). Back to Ready takes both.
 */
export function withUnservedBut(
  verdicts: Record<string, PathHealth>,
  unserved: Record<string, string>,
  keep: string,
): Record<string, PathHealth> {
  const out = { ...verdicts };
  for (const [id, message] of Object.entries(unserved))
    if (out[id]?.reason !== keep) out[id] = { ready: false, reason: "InstanceUnreachable", message };
  return out;
}

/** The Services some paths name (a Service's name as their host), each with its paths' ids and ports. */
export type NamedServices = Map<string, { ref: ServiceRef; paths: { id: string; port: number }[] }>;

/** The Services of paths given by id, host and port; a host that names no Service is left out. */
export function servicesNamed(
  paths: readonly { id: string; host: string; port: number }[],
  clusterDomain?: string,
): NamedServices {
  const out: NamedServices = new Map();
  for (const p of paths) {
    const target = instanceTargetOf(p.host, clusterDomain);
    if (target.kind !== "service") continue;
    const key = `${target.namespace}/${target.name}`;
    const entry = out.get(key) ?? { ref: { namespace: target.namespace, name: target.name }, paths: [] };
    entry.paths.push({ id: p.id, port: p.port });
    out.set(key, entry);
  }
  return out;
}
