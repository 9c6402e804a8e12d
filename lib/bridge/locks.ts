/** Which file-backend stack locks the bridge may clear. Pure. */

/** A file-backend stack lock: who holds it. */
export interface StackLock {
  file: string;
  pid?: number;
  hostname?: string;
}

/**
 * Locks left by an update whose process is gone (a bridge killed mid-update leaves one),
 * which are safe to clear; a lock held by a live process on this host is not, nor one of
 * another host (a replica sharing the backend). A lock file that does not parse at all (no
 * pid, no host) is stale too: the backend writes locks whole (write beside, rename), so only
 * a broken file looks like that, and keeping it would block its stack forever.
 */
export function staleLocks(
  locks: StackLock[],
  hostname: string,
  alive: (pid: number) => boolean,
): StackLock[] {
  return locks.filter(
    (l) =>
      (l.pid === undefined && l.hostname === undefined) ||
      (l.hostname === hostname && l.pid !== undefined && !alive(l.pid)),
  );
}
