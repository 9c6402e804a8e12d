import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { Stack } from "@pulumi/pulumi/automation";
import { pendingOperationCount } from "../../lib/bridge/checkpoint";
import { staleLocks, undeletedLock, type StackLock } from "../../lib/bridge/locks";
import { checkpointPaths } from "./checkpoint";
import type { RunOptions } from "./group-stacks";

/** A stack's file-backend locks: held by a live update, or left by one that is gone. */
export interface StackLockState {
  live: StackLock[];
  stale: StackLock[];
}

/** What clearing pending operations needs of a Pulumi Stack. */
export type PendingOperationsStack = Pick<Stack, "exportStack" | "importStack">;

/** What clearing a stale lock and the pending operations needs of a Pulumi Stack. */
export type StaleLockStack = PendingOperationsStack & Pick<Stack, "cancel">;

export interface StackLocksOptions {
  /** The file backend's directory; undefined for another backend (no locks are read then). */
  backendDir: string | undefined;
  /** The Pulumi project of the stacks (programs/bridge/workspaces.ts PROJECT). */
  project: string;
  /** This machine's name, as the backend writes it into the locks it takes. */
  hostname?: string;
  /** Whether a process of this machine still runs. */
  alive?: (pid: number) => boolean;
  /** This bridge reconciles only while it holds the leader lease (lib/bridge/locks.ts staleLocks). */
  leaderElected?: boolean;
}

/**
 * Whether a process of this machine still runs. Signal 0 checks without signalling, but it also
 * finds a zombie: an update's `pulumi` killed with its bridge is reparented to PID 1, and under an
 * init that is slow to reap (this machine's PID 1 is no init) it stays one, holding no lock any
 * more. proc(5): the state follows the command name's closing parenthesis in /proc/<pid>/stat.
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/s.test(fs.readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true; // no /proc (not Linux): signal 0 is all there is to go by
  }
}

/**
 * What an interrupted update leaves on a stack of the file backend: its lock, and the
 * operations it had started, recorded as pending. The bridge reads both before each run, so a
 * bridge killed mid-update does not block its stacks, and two updates never run on one stack.
 */
export class StackLocks {
  /** The stacks of a remote backend this leader has cleared (see releaseStale). */
  private readonly clearedThisTerm = new Set<string>();

  constructor(private readonly opts: StackLocksOptions) {}

  /**
   * The file-backend locks of a stack: a lock whose pulumi process is gone (the bridge was
   * killed mid-update) is stale and cleared with `pulumi cancel`; a lock held by a live
   * process makes the reconcile fail and retry later, so two updates never run on one stack.
   */
  inspect(stack: string): StackLockState {
    const root = this.opts.backendDir;
    if (!root) return { live: [], stale: [] };
    const dir = path.join(root, ".pulumi", "locks", "organization", this.opts.project, stack);
    if (!fs.existsSync(dir)) return { live: [], stale: [] };
    // The backend keeps a `.attrs` file next to each lock; only the `.json` files are locks.
    const locks = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith(".json"))
      .map((f): StackLock => {
        const file = path.join(dir, f);
        try {
          const j = JSON.parse(fs.readFileSync(file, "utf8")) as { pid?: number; hostname?: string };
          return { file, pid: j.pid, hostname: j.hostname };
        } catch {
          return { file };
        }
      });
    const stale = staleLocks(
      locks,
      this.opts.hostname ?? os.hostname(),
      this.opts.alive ?? processAlive,
      this.opts.leaderElected ?? false,
    );
    return { live: locks.filter((l) => !stale.includes(l)), stale };
  }

  /**
   * Clears what an update whose process is gone left on the stack: its lock (`pulumi cancel`)
   * and the operations it recorded as pending. `which` names that update in the log line ("the
   * lock of <which>"); `state` is what `inspect` found, when the caller has it already.
   */
  async releaseStale(
    stack: string,
    engine: StaleLockStack,
    log: RunOptions["log"],
    which: string,
    state: StackLockState = this.inspect(stack),
  ): Promise<void> {
    if (!this.opts.backendDir) return this.releaseRemote(stack, engine, log);
    if (state.stale.length > 0) {
      log("warn", `clearing the lock of ${which}`, { locks: state.stale.map((l) => l.pid) });
      await engine.cancel();
    }
    await this.clearPendingOperations(stack, engine, log);
  }

  /**
   * A remote backend's locks (s3://, gs://, azblob://) are not read here. Under leader election
   * none can be live when this replica first runs a stack: only the lease holder runs updates,
   * and a holder whose lease lapses stops by its own clock before another can take the lease
   * (programs/bridge/leader.ts). So on its first run of each stack the leader clears whatever a
   * predecessor killed mid-update left with `pulumi cancel` (which removes the backend's locks
   * and is a no-op on an unlocked stack, checked on an S3 backend with Pulumi 3.276.0). Without
   * leader election a second bridge may be running an update on the same stack (a Deployment's
   * rolling update), so no lock is cleared and one left behind makes the run fail with the
   * engine's own words, which name `pulumi cancel`. Pending operations are cleared either way,
   * through the engine, as before.
   */
  private async releaseRemote(stack: string, engine: StaleLockStack, log: RunOptions["log"]): Promise<void> {
    if (this.opts.leaderElected && !this.clearedThisTerm.has(stack)) {
      await engine.cancel();
      this.clearedThisTerm.add(stack);
      log("warn", "first run of this stack as the leader: cleared any lock an earlier leader left", {
        stack,
      });
    }
    await this.clearPendingOperations(stack, engine, log);
  }

  /**
   * After a run whose engine could not delete its own lock (`cliOutput` is the CLI's stderr,
   * lib/bridge/locks.ts undeletedLock): under leader election nobody else runs an update on a
   * stack while this replica leads, and this run has ended, so the lock is nobody's and is
   * cleared now rather than failing the group's next run. On the file backend the next run
   * finds it stale by its pid. Otherwise (a remote backend without leader election, where a
   * second bridge may hold a lock of its own) it is named in the log for an operator.
   */
  async afterRun(
    stack: string,
    engine: StaleLockStack,
    cliOutput: string,
    log: RunOptions["log"],
  ): Promise<void> {
    const left = undeletedLock(cliOutput);
    if (!left) return;
    if (!this.opts.backendDir && this.opts.leaderElected) {
      await engine.cancel();
      log("warn", "the engine could not delete its lock when the run ended; cleared it", {
        stack,
        lock: left.url,
        cause: left.cause,
      });
      return;
    }
    log("warn", "the engine could not delete its lock when the run ended", {
      stack,
      lock: left.url,
      cause: left.cause,
      ...(this.opts.backendDir ? {} : { fix: `pulumi cancel --stack ${stack}, once no update runs` }),
    });
  }

  /**
   * A bridge killed during an update leaves the operations it had started recorded as
   * pending, and the next update refuses to run. The providers here are idempotent (a
   * re-created proxy takes over the pid file, ports come from state), so the pending
   * entries are dropped and the next up re-creates whatever they were doing. The file
   * backend's checkpoint is read directly; only when it records some (or cannot be read)
   * is the stack exported and imported through the engine.
   */
  async clearPendingOperations(
    stack: string,
    engine: PendingOperationsStack,
    log: RunOptions["log"],
  ): Promise<void> {
    const root = this.opts.backendDir;
    if (root) {
      let text: string | undefined;
      try {
        text = fs.readFileSync(checkpointPaths(root, this.opts.project, stack).file, "utf8");
      } catch {
        // A new stack has no checkpoint yet: nothing pending.
        return;
      }
      if (pendingOperationCount(text) === 0) return;
    }
    const state = await engine.exportStack();
    const deployment = state.deployment as { pending_operations?: unknown[] } | undefined;
    if (!deployment?.pending_operations?.length) return;
    log("warn", "clearing pending operations of an interrupted update", {
      count: deployment.pending_operations.length,
    });
    deployment.pending_operations = [];
    await engine.importStack(state);
  }
}
