import * as fs from "node:fs";
import * as path from "node:path";

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

/**
 * A PATH with no folder inside `root`: what a process of a user who never cloned this repository
 * finds (the toolchain's binaries and the project's Node.js live outside it, in the cache).
 */
export function pathOutside(root: string, PATH: string | undefined): string {
  return (PATH ?? "")
    .split(path.delimiter)
    .filter((dir) => dir && !path.resolve(dir).startsWith(root))
    .join(path.delimiter);
}
