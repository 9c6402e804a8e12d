import { createHash } from "node:crypto";
import { compareStrings, sniServerName, type ProxyConnection } from "./types";

/**
 * The proxy's hop: HAProxy pods (the default), or kube-proxy alone (`kernel`): a Service with
 * no selector and, per connection, an EndpointSlice that mirrors the instance's ready
 * endpoints, so the node's DNAT is the only thing between consumer and instance
 * (docs/network-paths.md, "What a connection pays for its path", measured it as fast as direct).
 */
export type ProxyHop = "haproxy" | "kernel";
export const PROXY_HOPS: readonly ProxyHop[] = ["haproxy", "kernel"];

// What an instance host names, and what the bridge reads of a Service, are shared with WireGuard's
// health reader (network/contract/instance-service.ts).
export {
  instanceTargetOf,
  slicePortNamed,
  tcpServicePort,
  type EndpointSliceLike,
  type InstanceServiceLike,
  type InstanceTarget,
} from "../../contract/instance-service";
import {
  instanceTargetOf,
  slicePortNamed,
  tcpServicePort,
  type EndpointSliceLike,
  type InstanceServiceLike,
} from "../../contract/instance-service";

/** One instance endpoint a kernel path forwards to. */
export interface Backend {
  address: string;
  port: number;
}

/** What resolving one connection's instance gave: its ready endpoints, or why there are none. */
export type BackendsResult = { backends: Backend[] } | { problem: string };

/** The key a connection's backends are resolved and kept under: its instance host and port. */
export function backendKey(host: string, port: number): string {
  return `${host}:${port}`;
}

/**
 * The ready endpoints behind `port` of an instance Service: its port of that number (TCP),
 * matched by name to the ports of its EndpointSlices (as kube-proxy matches them), with each
 * slice's ready IPv4 addresses. A Service with no ready endpoint gives an empty list: the path
 * is realised and refuses connections until the instance is back, as the Service itself does.
 */
export function backendsOf(
  ref: { namespace: string; name: string },
  port: number,
  service: InstanceServiceLike | undefined,
  slices: readonly EndpointSliceLike[],
): BackendsResult {
  const where = `Service ${ref.namespace}/${ref.name}`;
  if (!service) return { problem: `${where} does not exist in the data-service cluster` };
  if (service.spec?.type === "ExternalName") {
    return {
      problem: `${where} is an ExternalName Service: it has no endpoints to forward to; give the instance's address, or use the haproxy hop`,
    };
  }
  const servicePort = tcpServicePort(service, port);
  if (!servicePort) {
    const ports = (service.spec?.ports ?? []).map((p) => p.port).join(", ") || "none";
    return { problem: `${where} has no TCP port ${port} (its ports: ${ports})` };
  }
  const name = servicePort.name ?? "";
  const seen = new Map<string, Backend>();
  for (const slice of slices) {
    if ((slice.addressType ?? "IPv4") !== "IPv4") continue;
    const slicePort = slicePortNamed(slice, name);
    if (typeof slicePort?.port !== "number") continue;
    for (const endpoint of slice.endpoints ?? []) {
      // Ready unset means ready (the EndpointSlice API's own rule for consumers).
      if (endpoint.conditions?.ready === false) continue;
      for (const address of endpoint.addresses ?? []) {
        const backend = { address, port: slicePort.port };
        seen.set(`${address}:${slicePort.port}`, backend);
      }
    }
  }
  return { backends: sortBackends([...seen.values()]) };
}

function sortBackends(list: Backend[]): Backend[] {
  return [...list].sort((a, b) => compareStrings(a.address, b.address) || a.port - b.port);
}

/** Why the kernel hop cannot carry a connection, or undefined when it can. */
export function kernelConnectionProblem(connection: ProxyConnection): string | undefined {
  const serverName = sniServerName(connection);
  if (serverName === undefined) return undefined;
  return `connection ${connection.id} asks for TLS server-name routing (${serverName}), which needs the haproxy hop: the kernel hop gives each connection its own port and cannot read a TLS handshake; set the app cluster's networkConnector.hop to haproxy, or drop the tlsSNI enhancement`;
}

/**
 * Why a connection gets no kernel path, in its path's terms: InvalidConnection when the
 * connection itself asks for what the hop cannot do, HostUnresolved when its instance host
 * gave no endpoints to forward to (the next run may find them).
 */
export type KernelProblemReason = "InvalidConnection" | "HostUnresolved";

/** A connection's backends, or why it has none and under which reason its path says so. */
export type ConnectionBackends = { backends: Backend[] } | { problem: string; reason: KernelProblemReason };

/** A connection's backends as its path is built with them, or why it cannot be. */
export function connectionBackends(
  connection: ProxyConnection,
  resolved: Readonly<Record<string, BackendsResult>> | undefined,
  clusterDomain?: string,
): ConnectionBackends {
  const invalid = kernelConnectionProblem(connection);
  if (invalid) return { problem: invalid, reason: "InvalidConnection" };
  const unresolved = (problem: string) => ({ problem, reason: "HostUnresolved" as const });
  const target = instanceTargetOf(connection.instanceHost, clusterDomain);
  if (target.kind === "unsupported") return unresolved(target.problem);
  if (target.kind === "address") return { backends: [{ address: target.address, port: connection.port }] };
  const found = resolved?.[backendKey(connection.instanceHost, connection.port)];
  if (!found) {
    return unresolved(
      `the endpoints of Service ${target.namespace}/${target.name} were not read (port ${connection.port}); the next run reads them`,
    );
  }
  if ("problem" in found) return unresolved(found.problem);
  return found;
}

/** The EndpointSlices of one connection: one per distinct target port, each with its addresses. */
export interface MirroredSlice {
  /** Index among the connection's slices (0 for the usual single port). */
  index: number;
  port: number;
  addresses: string[];
}

/**
 * A connection's backends grouped by target port: an EndpointSlice carries one set of ports
 * for all its endpoints, and an instance Service whose named target port differs between pods
 * (during a rollout that renumbers it) has endpoints on two ports.
 */
export function mirroredSlices(backends: readonly Backend[]): MirroredSlice[] {
  const byPort = new Map<number, string[]>();
  for (const b of sortBackends([...backends])) byPort.set(b.port, [...(byPort.get(b.port) ?? []), b.address]);
  return [...byPort.entries()]
    .sort(([a], [b]) => a - b)
    .map(([port, addresses], index) => ({ index, port, addresses }));
}

/** Whether two resolutions of a group's instances differ in anything a kernel path is built from. */
export function backendsDiffer(
  a: Readonly<Record<string, BackendsResult>>,
  b: Readonly<Record<string, BackendsResult>>,
): boolean {
  return canonical(a) !== canonical(b);
}

function canonical(r: Readonly<Record<string, BackendsResult>>): string {
  return JSON.stringify(
    Object.keys(r)
      .sort(compareStrings)
      .map((k) => [k, r[k]]),
  );
}

/** A short, stable stand-in for a connection id in names (ids hold '/' and may be long). */
export function kernelConnectionKey(id: string): string {
  return createHash("sha256").update(id).digest("hex").slice(0, 10);
}

/**
 * The kernel path's Service port of a connection (a DNS label), by which kube-proxy matches the
 * connection's EndpointSlices to it and the bridge's probe finds the port (../kernel-health.ts).
 */
export function kernelPortName(id: string): string {
  return `c-${kernelConnectionKey(id)}`;
}
