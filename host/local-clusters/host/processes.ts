import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

/** The argv of a running process, or undefined when it is gone (or a zombie, whose argv is empty). */
export function commandLine(pid: number): string[] | undefined {
  try {
    const raw = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
    if (raw.length === 0) return undefined;
    return raw.replace(/\0$/, "").split("\0");
  } catch {
    return undefined;
  }
}

function statFields(pid: number): string[] | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) is in parentheses and may contain spaces: split after it.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/**
 * Whether a pid is a running process. A zombie counts as dead: a killed child of a still
 * running parent (the test runner, say) stays a zombie until reaped, yet it holds no ports
 * and does no work.
 */
export function isAlive(pid: number): boolean {
  const state = statFields(pid)?.[0];
  return state !== undefined && state !== "Z" && state !== "X";
}

function parentPid(pid: number): number | undefined {
  const ppid = Number(statFields(pid)?.[1]);
  return Number.isInteger(ppid) && ppid > 0 ? ppid : undefined;
}

/** Whether any argument of the process is, or sits under, `dir` (also as `--flag=<dir>/…`). */
export function referencesDir(argv: string[], dir: string): boolean {
  const prefix = dir.endsWith("/") ? dir : `${dir}/`;
  return argv.some((arg) => {
    const value = arg.startsWith("--") && arg.includes("=") ? arg.slice(arg.indexOf("=") + 1) : arg;
    return value === dir || value.startsWith(prefix);
  });
}

/**
 * Every live process whose command line references `dir`, found by scanning /proc. This
 * process and its ancestors are left out: the CLI's own argv names the state dir
 * (`--state-dir DIR`), and so may the shell or npx that started it.
 */
export function processesReferencing(dir: string): number[] {
  const exclude = new Set<number>();
  for (
    let pid: number | undefined = process.pid;
    pid !== undefined && !exclude.has(pid);
    pid = parentPid(pid)
  ) {
    exclude.add(pid);
  }
  const found: number[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (exclude.has(pid)) continue;
    const argv = commandLine(pid);
    if (argv && referencesDir(argv, dir) && isAlive(pid)) found.push(pid);
  }
  return found.sort((a, b) => a - b);
}

export function readPidFile(file: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(file, "utf8").trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The pid recorded in a pid file if that process is alive and still ours (its argv references
 * the cluster dir). A recycled pid that now belongs to something else is not ours to signal.
 */
export function ownedPid(pidFile: string, clusterDir: string): number | undefined {
  const pid = readPidFile(pidFile);
  if (pid === undefined || !isAlive(pid)) return undefined;
  const argv = commandLine(pid);
  return argv && referencesDir(argv, clusterDir) ? pid : undefined;
}

export interface SpawnSpec {
  binary: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  logFile: string;
  pidFile: string;
}

/**
 * Starts a long-running process that outlives us: its own session and process group
 * (detached), no stdin, stdout and stderr appended to its log file, its pid in a pid file.
 */
export function spawnDetached(spec: SpawnSpec): number {
  fs.mkdirSync(path.dirname(spec.logFile), { recursive: true });
  fs.mkdirSync(path.dirname(spec.pidFile), { recursive: true });
  fs.appendFileSync(
    spec.logFile,
    `\n--- ${new Date().toISOString()} starting ${spec.binary} ${spec.args.join(" ")}\n`,
  );
  const fd = fs.openSync(spec.logFile, "a");
  try {
    const child = spawn(spec.binary, spec.args, {
      cwd: spec.cwd,
      env: spec.env,
      detached: true,
      stdio: ["ignore", fd, fd],
    });
    if (child.pid === undefined) throw new Error(`could not start ${spec.binary} (see ${spec.logFile})`);
    // Without an error listener a failed exec would crash us; the pid check above reports it.
    child.on("error", () => undefined);
    child.unref();
    fs.writeFileSync(spec.pidFile, `${child.pid}\n`);
    return child.pid;
  } finally {
    fs.closeSync(fd);
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    // The whole group: a detached child leads its own, and anything it forked goes with it.
    process.kill(-pid, sig);
  } catch {
    try {
      process.kill(pid, sig);
    } catch {
      // already gone
    }
  }
}

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}

/** SIGTERM, then SIGKILL if the process has not exited within graceMs. Resolves once it is gone. */
export async function stopProcess(pid: number, graceMs = 10_000): Promise<void> {
  if (!isAlive(pid)) return;
  signal(pid, "SIGTERM");
  if (await waitForExit(pid, graceMs)) return;
  signal(pid, "SIGKILL");
  if (!(await waitForExit(pid, 5_000))) throw new Error(`process ${pid} survived SIGKILL`);
}
