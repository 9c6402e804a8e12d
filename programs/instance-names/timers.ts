/**
 * Timers on a Clock that end together: a stopped watcher leaves nothing to fire (a test's fake
 * clock shows none pending), and a timer that fires after the stop does nothing.
 */
import type { Clock } from "../bridge/workqueue";

export class Timers {
  private readonly pending = new Set<unknown>();
  private stopped = false;

  constructor(readonly clock: Clock) {}

  /** Runs `fn` after `ms`, unless stopped by then; once stopped, sets nothing. */
  after(ms: number, fn: () => void): void {
    if (this.stopped) return;
    const handle = this.clock.setTimeout(() => {
      this.pending.delete(handle);
      if (!this.stopped) fn();
    }, ms);
    this.pending.add(handle);
  }

  stop(): void {
    this.stopped = true;
    for (const handle of this.pending) this.clock.clearTimeout(handle);
    this.pending.clear();
  }
}
