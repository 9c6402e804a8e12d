/**
 * The address ranges of the local clusters (host/local-clusters/), chosen by this project. They are
 * here, apart from the code that starts the clusters, so validation can check a stack's
 * settings against them without loading that code.
 */

/** kube-apiserver `--service-cluster-ip-range` of every local cluster. */
export const LOCAL_SERVICE_CIDR = "10.96.0.0/16";
/** The /30 links between this machine and the local nodes (host/local-clusters/node/addresses.ts). */
export const LOCAL_NODE_LINK_RANGE = "172.30.0.0/16";
/** A local node's pod CIDR when its cluster sets no `network.podCidr`. */
export const LOCAL_DEFAULT_POD_CIDR = "10.244.0.0/24";

/** One node's link: a /30 of LOCAL_NODE_LINK_RANGE per slot, host end `.1`, node end `.2`. */
export interface NodeLink {
  slot: number;
  hostAddress: string;
  nodeAddress: string;
  prefixLength: 30;
}

/** How many /30 links the range holds. */
export const NODE_LINK_SLOTS = 1 << 14;
const LINK_BASE = (172 << 24) | (30 << 16);

function dotted(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
}

/**
 * The link of the node in `slot` (its node.json keeps the slot). The node end is the node's
 * address, which other local nodes reach through this machine: a NodePort there answers them.
 */
export function nodeLink(slot: number): NodeLink {
  if (!Number.isInteger(slot) || slot < 0 || slot >= NODE_LINK_SLOTS)
    throw new Error(`node link slot ${slot} out of range`);
  const net = (LINK_BASE + slot * 4) >>> 0;
  return { slot, hostAddress: dotted(net + 1), nodeAddress: dotted(net + 2), prefixLength: 30 };
}
