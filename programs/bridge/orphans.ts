import * as crypto from "node:crypto";
import * as fs from "node:fs";

/**
 * Processes a previous bridge left behind: when the bridge is killed, the `pulumi` engine it
 * was running and that engine's plugin hosts are re-parented and keep the stack locked (or
 * linger forever). They are killed before the new bridge touches a stack.
 *
 * Only processes a bridge started are candidates: each bridge puts a marker naming itself
 * (pid, kernel start time, random) into the environment of the engines it runs, which the
 * engine's plugins inherit. A process is reaped when its marker names a bridge that is gone
 * AND it uses this bridge's backend. An operator's own `pulumi` on the same backend carries no
 * marker and is left alone, and so is a live bridge's engine (another replica, or a bridge
 * with its own state on this machine). A process group would not do: the bridge usually does
 * not lead its own group (it is started by a shell, a test, or a container runtime), so the
 * group holds processes that are not the bridge's. Linux only (/proc); elsewhere nothing is found.
 */
export const INSTANCE_ENV = "KLUTCH_BRIDGE_INSTANCE";

/** The kernel's start time of a process (clock ticks since boot), undefined when it is gone. */
function startTime(pid: number): string | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 22; the command (field 2) is in parentheses and may hold spaces, so count from its end.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

/** This bridge's marker: a pid alone could be reused by another process after a restart. */
export function instanceMarker(pid = process.pid): string {
  return `${pid}:${startTime(pid) ?? "0"}:${crypto.randomBytes(4).toString("hex")}`;
}

/** Whether the bridge a marker names still runs (same pid, same start time). */
export function markerAlive(marker: string): boolean {
  const [pid, start] = marker.split(":");
  const n = Number(pid);
  return Number.isInteger(n) && n > 0 && start !== undefined && startTime(n) === start;
}

export function findOrphans(backendUrl: string, self = process.pid): number[] {
  if (!fs.existsSync("/proc")) return [];
  const backend = `PULUMI_BACKEND_URL=${backendUrl}`;
  const found: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === self) continue;
    try {
      const environ = fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
      if (!environ.includes(backend)) continue;
      const marker = environ.find((e) => e.startsWith(`${INSTANCE_ENV}=`))?.slice(INSTANCE_ENV.length + 1);
      if (marker && !markerAlive(marker)) found.push(pid);
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
