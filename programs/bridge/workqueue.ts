import { backoffDelay } from "../../lib/bridge/backoff";

/**
 * The work queue between the cache and the reconciler, with controller-runtime's rules
 * (client-go's workqueue + controller-runtime's reconcile.Result):
 * - a key is queued at most once, however many events name it;
 * - a key never runs twice at once: an event during its run queues it again, to run after;
 * - at most `concurrency` keys run at once;
 * - the handler returns `{ requeueAfter }` to run the key again later, nothing when done,
 *   throws a TerminalError when retrying cannot help (not requeued), or throws anything else
 *   to be retried with per-key exponential backoff (reset by a success);
 * - a delayed key keeps its earliest due time, and an event in the meantime runs it at once;
 * - nothing runs before start() (controller-runtime starts its workers once the cache has
 *   synced), and a key added is picked up on the next turn of the event loop, never inside
 *   the add: an informer delivers a (re)list as one synchronous burst of add events, and a
 *   reconcile started by the first of them would see a cache holding only part of the list
 *   (seen: a group whose first listed path was being deleted looked empty, and its stack,
 *   HAProxy included, was destroyed under a live connection).
 *
 * Time comes from a Clock, so every rule is tested without waiting (programs/bridge/seams.test.ts).
 */

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** What a reconcile asks of the queue when it succeeds (controller-runtime's reconcile.Result). */
export interface Result {
  /** Run the key again after this many ms (e.g. re-probe an instance that was down). */
  requeueAfter?: number;
}

/** A failure that retrying cannot fix (controller-runtime's reconcile.TerminalError): not requeued. */
export class TerminalError extends Error {}

export interface WorkQueueOptions {
  concurrency: number;
  handler: (key: string) => Promise<Result | void>;
  clock?: Clock;
  /** The delay before retry `attempt` (1, 2, …) of a failed key. */
  backoff?: (attempt: number) => number;
  /** Called with the number of keys waiting to run (not running, not delayed). */
  onDepth?: (depth: number) => void;
  /** Called when a key's handler failed, with the delay before its retry (undefined: terminal). */
  onError?: (key: string, error: Error, attempt: number, retryInMs: number | undefined) => void;
}

export class WorkQueue {
  private readonly queue = new Set<string>();
  private readonly running = new Map<string, Promise<void>>();
  private readonly timers = new Map<string, { due: number; handle: unknown }>();
  private readonly failures = new Map<string, number>();
  private readonly clock: Clock;
  private readonly backoff: (attempt: number) => number;
  private shuttingDown = false;
  private started = false;
  private pumpScheduled = false;

  constructor(private readonly opts: WorkQueueOptions) {
    this.clock = opts.clock ?? realClock;
    this.backoff = opts.backoff ?? ((attempt) => backoffDelay(attempt));
  }

  /** Queues a key to run as soon as a worker is free (and its own run, if any, has ended). */
  add(key: string): void {
    if (this.shuttingDown) return;
    const timer = this.timers.get(key);
    if (timer) {
      this.clock.clearTimeout(timer.handle);
      this.timers.delete(key);
    }
    this.queue.add(key);
    this.opts.onDepth?.(this.queue.size);
    this.schedulePump();
  }

  /** Starts running keys (those added so far included). */
  start(): void {
    this.started = true;
    this.schedulePump();
  }

  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  /** Queues a key after `ms`; an earlier pending due time wins. */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) return this.add(key);
    const due = this.clock.now() + ms;
    const existing = this.timers.get(key);
    if (existing && existing.due <= due) return;
    if (existing) this.clock.clearTimeout(existing.handle);
    const handle = this.clock.setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, ms);
    this.timers.set(key, { due, handle });
  }

  /** How many times a key has failed in a row. */
  attempts(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** Keys running now. */
  active(): string[] {
    return [...this.running.keys()];
  }

  /** Keys waiting for a worker. */
  get depth(): number {
    return this.queue.size;
  }

  /** Takes no more work and drops delayed keys; resolves when the running keys ended, or after `timeoutMs` (false). */
  async shutDown(timeoutMs: number): Promise<boolean> {
    this.shuttingDown = true;
    this.queue.clear();
    for (const t of this.timers.values()) this.clock.clearTimeout(t.handle);
    this.timers.clear();
    if (this.running.size === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const ended = await Promise.race([
      Promise.allSettled([...this.running.values()]).then(() => true),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(false), timeoutMs))),
    ]);
    clearTimeout(timer);
    return ended;
  }

  private pump(): void {
    for (const key of [...this.queue]) {
      if (!this.started || this.shuttingDown || this.running.size >= this.opts.concurrency) return;
      if (this.running.has(key)) continue;
      this.queue.delete(key);
      this.opts.onDepth?.(this.queue.size);
      const run = this.process(key).finally(() => {
        this.running.delete(key);
        this.pump();
      });
      this.running.set(key, run);
    }
  }

  private async process(key: string): Promise<void> {
    try {
      const result = await this.opts.handler(key);
      this.failures.delete(key);
      if (result?.requeueAfter !== undefined) this.addAfter(key, result.requeueAfter);
    } catch (e) {
      const error = e instanceof Error ? e : new Error(String(e));
      if (error instanceof TerminalError) {
        this.failures.delete(key);
        this.opts.onError?.(key, error, 1, undefined);
        return;
      }
      const attempt = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, attempt);
      const delay = this.backoff(attempt);
      this.opts.onError?.(key, error, attempt, delay);
      this.addAfter(key, delay);
    }
  }
}
