import * as fs from "node:fs";
import * as path from "node:path";
import { isAlive, readPidFile } from "./processes";

export const LOCK_FILE = ".lock";

/**
 * Runs fn while holding `<stateDir>/.lock`, so two `up`/`down` commands on the same state dir
 * take turns instead of starting the same cluster twice on the same ports. The lock holds the
 * owner's pid; a lock whose owner died is taken over. (Two waiters taking over the same dead
 * lock at the same instant could both win: acceptable for a developer tool.)
 */
export async function withStateLock<T>(stateDir: string, fn: () => Promise<T>, waitMs = 300_000): Promise<T> {
  fs.mkdirSync(stateDir, { recursive: true });
  const file = path.join(stateDir, LOCK_FILE);
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      fs.writeFileSync(file, `${process.pid}\n`, { flag: "wx" });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const stat = fs.statSync(file, { throwIfNoEntry: false });
    if (!stat) continue; // released meanwhile
    const owner = readPidFile(file);
    // A lock without a pid is being written this very moment, unless it has been empty for a
    // while (its writer died half-way); one with a dead owner is stale.
    const stale = owner === undefined ? Date.now() - stat.mtimeMs > 2_000 : !isAlive(owner);
    if (stale) {
      fs.rmSync(file, { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `another local-clusters command (pid ${owner ?? "unknown"}) is still working on ${stateDir}; try again later`,
      );
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  try {
    return await fn();
  } finally {
    if (readPidFile(file) === process.pid) fs.rmSync(file, { force: true });
  }
}
