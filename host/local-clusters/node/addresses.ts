import {
  LOCAL_DEFAULT_POD_CIDR,
  LOCAL_NODE_LINK_RANGE,
  NODE_LINK_SLOTS,
  nodeLink,
  type NodeLink,
} from "../../../lib/local/network";

export { NODE_LINK_SLOTS, nodeLink, type NodeLink };

/**
 * The node's link to the host: a /30 out of NODE_LINK_RANGE per node, host end `.1`, node end
 * `.2`. The range is the project's own choice (nothing else here uses 172.30.0.0/16); the
 * host gets no route anywhere else through a node, and a node no default route: traffic from a
 * node or its pods can reach the host end of its own link and nothing beyond this machine.
 */
export const NODE_LINK_RANGE = LOCAL_NODE_LINK_RANGE;

/** The slot whose /30 holds `address`, if it is in the range. */
export function slotOf(address: string): number | undefined {
  const parts = address.split(".").map(Number);
  if (parts.length !== 4 || parts[0] !== 172 || parts[1] !== 30) return undefined;
  return (((parts[2] ?? 0) << 8) | (parts[3] ?? 0)) >> 2;
}

/**
 * A free slot: the one derived from the node's id when nothing uses it, else the next free
 * one. `used` holds the slots of addresses on the host's interfaces (other nodes running now)
 * and those other nodes under the same state dir have persisted (down right now).
 */
export function chooseSlot(id: string, used: Set<number>): number {
  const start = parseInt(id.slice(0, 8), 16) % NODE_LINK_SLOTS;
  for (let i = 0; i < NODE_LINK_SLOTS; i++) {
    const slot = (start + i) % NODE_LINK_SLOTS;
    if (!used.has(slot)) return slot;
  }
  throw new Error(`no free /30 left in ${NODE_LINK_RANGE}`);
}

/** The default pod CIDR of a local node when its cluster sets no network.podCidr. */
export const DEFAULT_POD_CIDR = LOCAL_DEFAULT_POD_CIDR;
