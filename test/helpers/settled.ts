/**
 * Polls `get` until `done` holds for its value or the attempts run out, and returns the last
 * value either way, so the assertion that follows shows what was seen. For what settles in a
 * moment (the API server's RBAC cache after a change: a few 100 ms), not for slow waits
 * (`eventually` in kubectl.ts throws with a message instead).
 */
export async function settled<T>(
  get: () => Promise<T>,
  done: (value: T) => boolean,
  attempts = 40,
  intervalMs = 250,
): Promise<T> {
  for (let i = 1; ; i++) {
    const value = await get();
    if (done(value) || i >= attempts) return value;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
