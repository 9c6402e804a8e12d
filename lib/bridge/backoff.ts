/** The bridge's retry schedule. Pure. */

/**
 * Exponential backoff with full jitter: attempt 1 waits up to `base`, doubling to `max`.
 * `random` is injectable so the schedule is testable.
 */
export function backoffDelay(
  attempt: number,
  base = 1000,
  max = 60_000,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(max, base * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}
