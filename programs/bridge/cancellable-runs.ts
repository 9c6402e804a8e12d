/**
 * The engine runs in flight, so the bridge can cancel them when it stops: aborting a run's
 * signal sends `pulumi` SIGINT, on which the engine stops cleanly (checkpoint written, lock
 * released). One abort controller per run, not one for the bridge: the Automation API adds a
 * listener to the signal on every run and never removes it, so a shared signal would leak one
 * per run.
 */
export class CancellableRuns {
  private readonly runs = new Set<AbortController>();
  private stopped = false;

  /** Throws once the runs are cancelled: a run about to start must not. */
  throwIfCancelled(): void {
    if (this.stopped) throw new Error("the bridge is stopping");
  }

  /** Runs `fn` with a signal that `cancel` aborts; never starts it after `cancel`. */
  async run<T>(fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const abort = new AbortController();
    this.runs.add(abort);
    try {
      // A cancel between the caller's preparations and here aborted nothing of this run: it
      // never starts. (One that lands inside `stack.up` before the CLI is spawned is not seen
      // by the Automation API, which listens for "abort" only once the process runs: that
      // update completes, and the bridge's SIGTERM handler waits for it like for any run in
      // flight.)
      this.throwIfCancelled();
      return await fn(abort.signal);
    } finally {
      this.runs.delete(abort);
    }
  }

  /** Cancels the runs in flight, and every later one. */
  cancel(): void {
    this.stopped = true;
    for (const run of this.runs) run.abort();
  }
}
