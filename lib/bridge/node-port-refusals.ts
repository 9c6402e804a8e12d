/**
 * Node ports the data plane's API server refused as already allocated, held out of a group's
 * port plan for a while so its proxy moves to free ports at once instead of retrying the same
 * refusal.
 *
 * The API server's refusal of an explicit nodePort (k8s.io/kubernetes v1.37.2, as in v1.33.4:
 * pkg/registry/core/service/portallocator/allocator.go ErrAllocated, reported as a field error
 * by pkg/registry/core/service/storage/alloc.go):
 *   Service "x" is invalid: spec.ports[0].nodePort: Invalid value: 31000: provided port is already allocated
 * Either another Service holds the port, or the allocation leaked: an API server that stopped
 * between allocating and committing a Service create leaves the port marked in etcd's bitmap
 * with no Service. The API server's repair loop frees such a port only on its third run that
 * sees it (pkg/registry/core/service/portallocator/controller/repair.go
 * numRepairsBeforeLeakCleanup = 3), every 3 minutes (pkg/controlplane/instance.go
 * repairLoopInterval): 6 to 9 minutes. So a refused port is held out for 10 minutes.
 */

export const HOLD_OUT_MS = 10 * 60_000;

/** The reason a path's conditions carry while its group moves off refused node ports. */
export const NODE_PORT_ALLOCATED = "NodePortAllocated";

const REFUSAL = /nodePort: Invalid value: (\d+): provided port is already allocated/g;

/** The node ports an engine error says were refused as already allocated (none: another error). */
export function refusedNodePorts(message: string): number[] {
  return [...new Set([...message.matchAll(REFUSAL)].map((m) => Number(m[1])))].sort((a, b) => a - b);
}

/** The message on each path of the group while it moves. */
export function nodePortRefusedMessage(
  group: string,
  ports: readonly number[],
  heldOut: readonly number[],
): string {
  const list = ports.join(", ");
  return (
    `the data plane's API server refused node port${ports.length === 1 ? "" : "s"} ${list} of group ${group} as already allocated ` +
    `(held by a Service outside this group, or an allocation the API server leaked; its repair loop frees a leaked one within about 9 minutes); ` +
    `the group is built again at once without ${heldOut.length === 1 ? "it" : `them (${heldOut.join(", ")} held out for 10 minutes)`}`
  );
}

/** Refused ports per group, each until its hold-out ends. */
export class HeldOutPorts {
  private readonly until = new Map<string, Map<number, number>>();

  constructor(private readonly now: () => number) {}

  /** Holds the ports out of the group's plan; true when any of them was not held out already. */
  add(group: string, ports: readonly number[]): boolean {
    const held = this.until.get(group) ?? new Map<number, number>();
    const now = this.now();
    let grew = false;
    for (const port of ports) {
      if (!((held.get(port) ?? 0) > now)) grew = true;
      held.set(port, now + HOLD_OUT_MS);
    }
    this.until.set(group, held);
    return grew;
  }

  /** The group's ports still held out, ascending. */
  of(group: string): number[] {
    const held = this.until.get(group);
    if (!held) return [];
    const now = this.now();
    for (const [port, until] of held) if (until <= now) held.delete(port);
    if (held.size === 0) this.until.delete(group);
    return [...held.keys()].sort((a, b) => a - b);
  }
}
