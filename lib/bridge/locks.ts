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
  /**
   * This bridge holds the leader lease (`--leader-elect`): then a lock of another host is a
   * former leader's, which either stopped its engines before it let the lease go or is gone
   * (a leader that cannot renew exits: programs/bridge/leader.ts), so it is stale too. Without
   * this a leader killed mid-update left its successor a lock it never cleared.
   */
  leading = false,
): StackLock[] {
  return locks.filter(
    (l) =>
      (l.pid === undefined && l.hostname === undefined) ||
      (l.hostname === hostname && l.pid !== undefined && !alive(l.pid)) ||
      (leading && l.hostname !== undefined && l.hostname !== hostname),
  );
}

/**
 * The lock an engine run took and could not delete when it ended, from the CLI's own output:
 * the DIY backend deletes its lock in a deferred `Unlock` and, when that fails, only prints
 * "there was a problem deleting the lock at <url>, manual clean up may be required: <cause>"
 * (pulumi pkg/backend/diy/lock.go, v3.276.0) and still ends the run as it went. The lock stays,
 * and every later run of the stack fails as "currently locked" until someone clears it.
 */
export function undeletedLock(cliOutput: string): { url: string; cause: string } | undefined {
  const m = /there was a problem deleting the lock at (\S+), manual clean up may be required: ([^\n]*)/.exec(
    cliOutput,
  );
  return m ? { url: m[1]!, cause: m[2]!.trim() } : undefined;
}
