import * as fs from "node:fs";

/**
 * Processes a previous bridge left behind: when the bridge is killed, the `pulumi` engine
 * it was running and that engine's plugin hosts are re-parented and keep the stack locked
 * (or linger forever). At start the bridge has no children of its own, so every process
 * whose environment names this bridge's Pulumi backend is such a leftover; they are killed
 * before the new bridge touches a stack. Linux only (/proc); elsewhere nothing is found.
 */
export function findOrphans(backendUrl: string, self = process.pid): number[] {
  if (!fs.existsSync("/proc")) return [];
  const marker = `PULUMI_BACKEND_URL=${backendUrl}`;
  const found: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === self) continue;
    try {
      const environ = fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
      if (environ.includes(marker)) found.push(pid);
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

export async function reapOrphans(backendUrl: string, log: (pids: number[]) => void): Promise<void> {
  const pids = findOrphans(backendUrl);
  if (pids.length === 0) return;
  log(pids);
  for (const pid of pids) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && pids.some((p) => fs.existsSync(`/proc/${p}`))) {
    await new Promise((r) => setTimeout(r, 100));
  }
}
