/**
 * The records of Linux process accounting (`accton`) as Debian's acct prints them with `dump-acct`,
 * and the process tree they describe. Pure: the text comes from the caller.
 *
 * A line is `comm|version|utime|stime|etime|uid|gid|mem|io|pid|ppid|flags|exit|tty|start` (acct's
 * dump-acct.c, acct v3 records): times in clock ticks of 1/100 s (AHZ), the start as ctime
 * prints it. The kernel writes a record when a process exits, so a run's file holds every process
 * that ended while accounting was on, in the order they ended, and none that outlived it.
 */

/** One process that ended while accounting was on. */
export interface ProcessRecord {
  /** Its command name as the kernel keeps it: at most 15 characters, the last exec's. */
  command: string;
  /** User and system CPU time, in seconds. */
  cpuSeconds: number;
  elapsedSeconds: number;
  pid: number;
  ppid: number;
  /** When it started, in seconds (ctime's resolution: whole seconds). */
  startedAt: number;
}

/** A record with the record of the process that started it, when that one ended in the run too. */
export interface ProcessNode extends ProcessRecord {
  parent?: ProcessNode;
}

const TICKS_PER_SECOND = 100;
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** ctime's `Sun Nov 29 07:30:52 2026`, read as UTC: only differences between records matter. */
function ctimeSeconds(text: string): number | undefined {
  const m = /^\w{3} (\w{3}) +(\d{1,2}) (\d{2}):(\d{2}):(\d{2}) (\d{4})$/.exec(text.trim());
  if (!m) return undefined;
  const month = MONTHS.indexOf(m[1]!);
  if (month < 0) return undefined;
  return Date.UTC(Number(m[6]), month, Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5])) / 1000;
}

/**
 * The records of `dump-acct <file>`'s output. A line that is not a record stops the parse with
 * its line number: a different acct version's layout must not be read as numbers silently.
 */
export function parseDumpAcct(text: string): ProcessRecord[] {
  const records: ProcessRecord[] = [];
  text.split("\n").forEach((line, i) => {
    if (line.trim() === "") return;
    const f = line.split("|").map((x) => x.trim());
    const startedAt = f.length === 15 ? ctimeSeconds(f[14]!) : undefined;
    const numbers = [f[2], f[3], f[4], f[9], f[10]].map(Number);
    if (startedAt === undefined || numbers.some((n) => !Number.isFinite(n)) || f[1] !== "v3") {
      throw new Error(
        `dump-acct line ${i + 1} is not an acct v3 record (comm|v3|utime|stime|etime|uid|gid|mem|io|pid|ppid|flags|exit|tty|start): ${line.slice(0, 160)}`,
      );
    }
    const [utime, stime, etime, pid, ppid] = numbers as [number, number, number, number, number];
    records.push({
      command: f[0]!,
      cpuSeconds: (utime + stime) / TICKS_PER_SECOND,
      elapsedSeconds: etime / TICKS_PER_SECOND,
      pid,
      ppid,
      startedAt,
    });
  });
  return records;
}

/**
 * Each record linked to its parent's. Pids are reused many times in a long run (a CI run starts
 * about 70,000 processes), so the parent is the process with that pid that was alive when the
 * child started: of the records with pid = ppid whose lifetime covers the child's start (a second
 * of slack either side, for ctime's whole seconds), the one that started last.
 */
export function linkParents(records: readonly ProcessRecord[]): ProcessNode[] {
  const nodes: ProcessNode[] = records.map((r) => ({ ...r }));
  const byPid = new Map<number, ProcessNode[]>();
  for (const n of nodes) {
    const same = byPid.get(n.pid);
    if (same) same.push(n);
    else byPid.set(n.pid, [n]);
  }
  for (const n of nodes) {
    let best: ProcessNode | undefined;
    for (const p of byPid.get(n.ppid) ?? []) {
      if (p === n) continue;
      const alive = p.startedAt - 1 <= n.startedAt && n.startedAt <= p.startedAt + p.elapsedSeconds + 1;
      if (alive && (!best || p.startedAt > best.startedAt)) best = p;
    }
    if (best) n.parent = best;
  }
  return nodes;
}

/**
 * Whether one of a process's ancestors has a command matching `test`. The walk stops after 64
 * steps: records matched by pid and time could in theory close a loop.
 */
export function hasAncestor(node: ProcessNode, test: (command: string) => boolean): boolean {
  let steps = 0;
  for (let p = node.parent; p && steps < 64; p = p.parent, steps++) if (test(p.command)) return true;
  return false;
}
