import * as fs from "node:fs";

/**
 * Whether a pid is gone, or a zombie waiting to be reaped (which holds nothing any more): what
 * a test wants to know after stopping a process it did not start itself.
 */
export function gone(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return /^[ZX]/.test(stat.slice(stat.lastIndexOf(")") + 2));
  } catch {
    return true;
  }
}
