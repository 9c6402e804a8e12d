import * as fs from "node:fs";
import { killQuietly, namespacePids, runningPid, startDetached, stopDaemon } from "./process-supervision";
import type { CompleteProvider, LocalTcpForwarderInputs, LocalTcpForwarderOutputs } from "./types";
import { sleepSync } from "./wait";

/**
 * The provider of `LocalTcpForwarder`, one per connection: socat in the client namespace, the
 * forwarder the app side dials (the pod's `socat` container in the Kubernetes rendering).
 */

/** How long a forwarder's socat may take to listen before the start counts as failed. */
const FORWARDER_START_TIMEOUT_MS = 20_000;

/** What a forwarder's pid file may name. */
export const SOCAT = /socat/;

/** Also the resource's id: one pid file per connection and namespace. */
export function forwarderPidFile(i: Pick<LocalTcpForwarderInputs, "dir" | "netns" | "name">): string {
  return `${i.dir}/${i.netns}-${i.name}.pid`;
}

function forwarderLogFile(i: LocalTcpForwarderInputs): string {
  return `${i.dir}/${i.netns}-${i.name}.log`;
}

/** Stops the forwarder and its per-session children (its whole process group). */
function stopForwarder(pidFile: string): void {
  stopDaemon(pidFile, SOCAT, { processGroup: true });
}

/**
 * The forwarders of this listener in the client's namespace, whatever the pid file says (a pid
 * file lost to a crash must not leave a process holding the port): the namespace is this
 * project's, and the listen argument names the connection's port.
 */
function strays(i: LocalTcpForwarderInputs): number[] {
  const mine = `TCP-LISTEN:${i.listenPort},bind=${i.listenAddress},`;
  return namespacePids(i.netns).filter((pid) => {
    try {
      const argv = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      return argv[0]?.endsWith("socat") === true && argv.some((a) => a.startsWith(mine));
    } catch {
      return false;
    }
  });
}

/**
 * Whether `pid` itself listens on `port`. /proc/<pid>/net/tcp is the table of the process's own
 * network namespace; the listening socket must be this process's own (its inode among
 * /proc/<pid>/fd): another process of the namespace that holds the port listens there too, and
 * the forwarder, refused the port, exits.
 */
function listening(pid: number, port: number): boolean {
  try {
    const hex = port.toString(16).toUpperCase().padStart(4, "0");
    const own = new Set<string>();
    for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m?.[1]) own.add(m[1]);
      } catch {
        // The fd closed while listed.
      }
    }
    return fs
      .readFileSync(`/proc/${pid}/net/tcp`, "utf8")
      .split("\n")
      .some((l) => {
        const f = l.trim().split(/\s+/);
        return f[1]?.endsWith(`:${hex}`) === true && f[3] === "0A" && own.has(f[9] ?? "");
      });
  } catch {
    return false;
  }
}

/** Why socat, started as `pid`, is not listening yet: an Error to throw, or undefined to wait on. */
function startFailure(i: LocalTcpForwarderInputs, pidFile: string, deadline: number): Error | undefined {
  const exited = runningPid(pidFile, SOCAT) === undefined;
  if (!exited && Date.now() <= deadline) return undefined;
  const logFile = forwarderLogFile(i);
  const said = fs.readFileSync(logFile, "utf8").trim().split("\n").pop() ?? "";
  stopForwarder(pidFile);
  const where = `the forwarder ${i.listenAddress}:${i.listenPort} in ${i.netns}`;
  if (!exited)
    return new Error(
      `${where} did not start listening within ${FORWARDER_START_TIMEOUT_MS / 1000} s (the host is busy; see ${logFile}). The bridge tries again on every reconcile.`,
    );
  const fix = /Address already in use/.test(said)
    ? `another process in network namespace ${i.netns} holds port ${i.listenPort}: stop it, or give the connection another port`
    : `see ${logFile}`;
  return new Error(
    `${where} does not listen (${said.replace(/^\S+ \S+ socat\[\d+\] /, "") || "no output"}); ${fix}. The bridge tries again on every reconcile.`,
  );
}

/** Starts the forwarder, replacing any of this listener, and returns once it listens. */
function start(i: LocalTcpForwarderInputs): void {
  fs.mkdirSync(i.dir, { recursive: true, mode: 0o700 });
  const pidFile = forwarderPidFile(i);
  stopForwarder(pidFile);
  for (const pid of strays(i)) process.kill(pid, "SIGKILL");
  // socat, as in the client pod (render-k8s.ts): one process per connection, a child per session.
  const pid = startDetached({
    ns: i.netns,
    argv: [
      "socat",
      `TCP-LISTEN:${i.listenPort},bind=${i.listenAddress},fork,reuseaddr`,
      `TCP:${i.host}:${i.port},connect-timeout=5`,
    ],
    pidFile,
    logFile: forwarderLogFile(i),
    what: `the forwarder ${i.listenAddress}:${i.listenPort}`,
  });
  // socat either listens or exits at once; a slow start only means a busy host, so the
  // deadline is generous and, when it passes with socat still alive, says so rather than
  // diagnosing a failure that has not happened.
  const deadline = Date.now() + FORWARDER_START_TIMEOUT_MS;
  while (!listening(pid, i.listenPort)) {
    const failure = startFailure(i, pidFile, deadline);
    if (failure) throw failure;
    sleepSync(50);
  }
}

/** Starts the forwarder; its failure, if any, in the state rather than thrown. */
function realise(i: LocalTcpForwarderInputs): LocalTcpForwarderOutputs {
  // Only the inputs: a `failure` of the last run must not outlive a start that works.
  const inputs: LocalTcpForwarderInputs = {
    name: i.name,
    dir: i.dir,
    netns: i.netns,
    listenAddress: i.listenAddress,
    listenPort: i.listenPort,
    host: i.host,
    port: i.port,
  };
  try {
    start(inputs);
    return inputs;
  } catch (e) {
    return { ...inputs, failure: e instanceof Error ? e.message : String(e) };
  }
}

/** The pids the forwarder pid files of `dir` record, whichever resource they belong to. */
function recordedPids(dir: string): Set<number> {
  return new Set(
    fs
      .readdirSync(dir)
      .filter((f) => f.endsWith(".pid"))
      .map((f) => Number(fs.readFileSync(`${dir}/${f}`, "utf8").trim())),
  );
}

export const localTcpForwarderProvider: CompleteProvider<
  LocalTcpForwarderInputs,
  LocalTcpForwarderOutputs,
  "diff" | "update" | "read" | "delete"
> = {
  create(inputs) {
    return Promise.resolve({ id: forwarderPidFile(inputs), outs: realise(inputs) });
  },

  diff(_id, olds, news) {
    if (
      olds.netns !== news.netns ||
      olds.listenPort !== news.listenPort ||
      olds.dir !== news.dir ||
      olds.name !== news.name
    )
      return Promise.resolve({ changes: true, replaces: ["listenPort"], deleteBeforeReplace: true });
    const pid = runningPid(forwarderPidFile(olds), SOCAT);
    // A failed forwarder is tried again on every reconcile: what blocked it may be gone.
    const dead = pid === undefined || !listening(pid, olds.listenPort) || olds.failure !== undefined;
    return Promise.resolve({ changes: dead || olds.host !== news.host || olds.port !== news.port });
  },

  update(_id, _olds, news) {
    return Promise.resolve({ outs: realise(news) });
  },

  read(id, props) {
    // A failed one stays (its failure is what the path reports); a dead one is gone.
    if (props?.failure !== undefined) return Promise.resolve({ id, props });
    // An empty id tells the engine the resource is gone; it ignores the props but needs an object.
    if (!props || runningPid(forwarderPidFile(props), SOCAT) === undefined)
      return Promise.resolve({ id: "", props: {} as LocalTcpForwarderOutputs });
    return Promise.resolve({ id, props });
  },

  delete(_id, props) {
    stopForwarder(forwarderPidFile(props));
    // A forwarder of this connection that no pid file names (lost to a crash) goes too; one
    // that another resource's pid file names (a new connection on the same port) stays.
    const recorded = recordedPids(props.dir);
    for (const pid of strays(props)) if (!recorded.has(pid)) killQuietly(pid);
    fs.rmSync(forwarderLogFile(props), { force: true });
    return Promise.resolve();
  },
};
