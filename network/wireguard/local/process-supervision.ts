import { spawn } from "node:child_process";
import * as fs from "node:fs";
import { childEnvironment, sh } from "./commands";
import { sleepSync } from "./wait";

/**
 * The daemons of the local WireGuard runtime (wireguard-go, socat): started detached inside a
 * network namespace, tied to their resource by a pid file, checked and stopped through it.
 *
 * They are detached, with PATH as their only environment (childEnvironment), so they outlive
 * the engine that started them.
 */

/** A daemon to start: argv runs in network namespace `ns`. */
export interface DetachedProcess {
  ns: string;
  argv: string[];
  pidFile: string;
  /** Receives the daemon's stdout and stderr (appended, 0600). */
  logFile: string;
  /** Names the daemon in the error when it cannot be started. */
  what: string;
}

/**
 * Starts the daemon and records its pid; returns the pid. `ip netns exec` execs the command
 * itself (no fork), so the recorded pid is the daemon's.
 */
export function startDetached(p: DetachedProcess): number {
  const log = fs.openSync(p.logFile, "a", 0o600);
  const child = spawn("ip", ["netns", "exec", p.ns, ...p.argv], {
    detached: true,
    stdio: ["ignore", log, log],
    env: childEnvironment(),
  });
  fs.closeSync(log);
  child.unref();
  if (!child.pid) throw new Error(`could not start ${p.what} in ${p.ns}`);
  fs.writeFileSync(p.pidFile, `${child.pid}\n`);
  return child.pid;
}

/**
 * The pid the pid file names while that process runs and is still `program`: a pid recycled
 * by another process is not ours. Undefined for a missing, malformed or stale pid file.
 */
export function runningPid(pidFile: string, program: RegExp): number | undefined {
  try {
    const pid = Number(fs.readFileSync(pidFile, "utf8").trim());
    if (!Number.isInteger(pid) || pid <= 0) return undefined;
    process.kill(pid, 0);
    if (!program.test(fs.readFileSync(`/proc/${pid}/cmdline`, "utf8"))) return undefined;
    return pid;
  } catch {
    return undefined;
  }
}

/** How a daemon is stopped. */
export interface StopPolicy {
  /** SIGTERM its whole process group (a forking daemon's children go with it). */
  processGroup: boolean;
  /** Wait this long for SIGTERM to take, then SIGKILL; without it, SIGTERM alone. */
  killAfterMs?: number;
}

/** Stops the daemon the pid file names, if it is still `program`, and removes the pid file. */
export function stopDaemon(pidFile: string, program: RegExp, policy: StopPolicy): void {
  const pid = runningPid(pidFile, program);
  if (pid !== undefined) {
    if (policy.processGroup) terminateGroup(pid);
    else process.kill(pid, "SIGTERM");
    if (policy.killAfterMs !== undefined) {
      waitForExit(pid, policy.killAfterMs);
      killQuietly(pid);
    }
  }
  fs.rmSync(pidFile, { force: true });
}

/** SIGTERM to the process group `pid` leads, or to the process alone when it leads none. */
function terminateGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGTERM");
  } catch {
    process.kill(pid, "SIGTERM");
  }
}

/** Returns once `pid` is gone or `ms` have passed. */
function waitForExit(pid: number, ms: number): void {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    sleepSync(50);
  }
}

/** SIGKILL, for a process that may have exited meanwhile. */
export function killQuietly(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Gone meanwhile.
  }
}

/** The pids of every process in network namespace `ns`; none when it does not exist. */
export function namespacePids(ns: string): number[] {
  return sh(["ip", "netns", "pids", ns], { allowFail: true })
    .split("\n")
    .map(Number)
    .filter((pid) => pid > 0);
}
