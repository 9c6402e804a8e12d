/**
 * Waiting inside a provider's step. The steps are synchronous (each runs commands one after the
 * other with spawnSync), so a wait blocks the thread rather than yielding to the event loop.
 */

/** Blocks the thread for `ms` milliseconds. */
export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Polls `check` every 50 ms until it holds; throws naming `what` once `ms` have passed. */
export function waitUntil(what: string, check: () => boolean, ms: number): void {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    sleepSync(50);
  }
}
