/**
 * The address a NodePort proxy reports as its consumers' host (status.hostForConsumer). A
 * NodePort Service listens on every node (kube-proxy's default `nodePortAddresses`), so any
 * node an app cluster can reach serves it; the cluster-local Service name the proxy reports
 * otherwise resolves only inside the data-service cluster, never in an app cluster. Pure: the
 * bridge lists the nodes (programs/bridge/data-plane-nodes.ts).
 *
 * The address types are the kubelet's and cloud controllers' (core/v1 NodeAddress: InternalIP,
 * ExternalIP, InternalDNS, ExternalDNS, Hostname); a local node's kubelet reports its
 * `--node-ip` as InternalIP (host/local-clusters/node/config.ts).
 */

import { isReady } from "../kube/owner-conditions";

/** The fields of a core/v1 Node this reads. */
export interface NodeLike {
  metadata?: { name?: string; deletionTimestamp?: unknown };
  spec?: { unschedulable?: boolean };
  status?: {
    addresses?: { type: string; address: string }[];
    conditions?: { type: string; status: string }[];
  };
}

/**
 * Internal consumers (private source ranges: a peered network, the same machine) dial a node's
 * InternalIP; others its ExternalIP. Each falls back to the other, then to the DNS names.
 */
const PREFERENCE = {
  internal: ["InternalIP", "ExternalIP", "InternalDNS", "ExternalDNS"],
  external: ["ExternalIP", "ExternalDNS", "InternalIP", "InternalDNS"],
} as const;

/**
 * The host of the first Ready node by name (schedulable ones first: a cordoned node is often
 * about to go), in the order of preference; undefined when no Ready node has an address. The
 * same nodes give the same host, so a path's status does not flap between reconciles.
 */
export function nodePortHost(nodes: readonly NodeLike[], internal: boolean): string | undefined {
  const ready = nodes
    .filter((n) => !n.metadata?.deletionTimestamp)
    .filter(isReady)
    .sort(
      (a, b) =>
        Number(a.spec?.unschedulable === true) - Number(b.spec?.unschedulable === true) ||
        (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""),
    );
  for (const node of ready) {
    const addresses = node.status?.addresses ?? [];
    for (const type of PREFERENCE[internal ? "internal" : "external"]) {
      const found = addresses.find((a) => a.type === type && a.address);
      if (found) return found.address;
    }
  }
  return undefined;
}

/** The host for internal and for external consumers: what a node change may move. */
export interface NodePortHosts {
  internal?: string;
  external?: string;
}

export function nodePortHosts(nodes: readonly NodeLike[]): NodePortHosts {
  const internal = nodePortHost(nodes, true);
  const external = nodePortHost(nodes, false);
  return { ...(internal ? { internal } : {}), ...(external ? { external } : {}) };
}

/**
 * Whether a NodePort group realised with `realised` would report another host now. No Ready
 * node at all is no better host than the one it has, so that is no move.
 */
export function nodeHostMoved(
  realised: string | undefined,
  hosts: NodePortHosts,
  internal: boolean,
): boolean {
  const now = internal ? hosts.internal : hosts.external;
  return now !== undefined && now !== realised;
}

/** Whether a group's proxy reports a node the bridge picks: a NodePort Service, no `--node-host`. */
export function picksNodeHost(target: { serviceType: string; nodeHost?: string }): boolean {
  return target.serviceType === "NodePort" && !target.nodeHost;
}

/** A group's consumers are internal (InternalIP) unless its exposure says they are not. */
export function internalConsumers(target: { exposure?: { internal: boolean } }): boolean {
  return target.exposure?.internal ?? true;
}
