/**
 * Real PostgreSQL 15 and HAProxy processes under a test's or benchmark's own control, on
 * 127.0.0.1 only: used by the data-path tests (test/dataplane), the bridge e2e and the
 * proxy benchmark (test/bench/proxy.ts).
 */
import { strict as assert } from "node:assert";
import { ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { debianPostgres } from "../../host/local-clusters/images/host-rootfs";
import type { FilePorts } from "./ports";
import { HaproxyOptions, renderHaproxyConfig } from "../../network/proxy/model/haproxy-config";
import { planPorts } from "../../network/proxy/model/port-planner";
import { PortRange, ProxyConnection, listenerKeys } from "../../network/proxy/model/types";

const PG_BIN = debianPostgres().bin;
export const HAPROXY = "/usr/sbin/haproxy";
/** Environment for psql/pgbench: no TLS negotiation round trip, bounded connects. */
export const PG_CLIENT_ENV = {
  ...process.env,
  PGUSER: "postgres",
  PGDATABASE: "postgres",
  PGSSLMODE: "disable",
  PGCONNECT_TIMEOUT: "5",
};

/**
 * A new PostgreSQL data directory `<base>/data` (trust auth, superuser postgres), made by the
 * `postgres` user with Debian's initdb; `base` is created and given to that user.
 */
export function initdbAsPostgres(base: string): string {
  fs.mkdirSync(base, { recursive: true });
  execFileSync("chown", ["postgres:postgres", base]);
  const data = path.join(base, "data");
  execFileSync(
    "runuser",
    ["-u", "postgres", "--", `${PG_BIN}/initdb`, "-D", data, "-A", "trust", "-U", "postgres", "--no-sync"],
    {
      stdio: "ignore",
      timeout: 60000,
    },
  );
  return data;
}

/**
 * The argv that runs a PostgreSQL server in the foreground on `data` with `settings` (its `-c`
 * options): through runuser, as PostgreSQL refuses to run as root.
 */
export function postgresAsPostgres(data: string, settings: Record<string, string | number>): string[] {
  const options = Object.entries(settings).flatMap(([k, v]) => ["-c", `${k}=${v}`]);
  return ["runuser", "-u", "postgres", "--", `${PG_BIN}/postgres`, "-D", data, ...options];
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs a command to completion with a hard time limit (the child is killed when it is reached). */
export function run(
  cmd: string,
  args: string[],
  opts: { timeoutMs?: number; cwd?: string; input?: string } = {},
): Promise<RunResult> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: PG_CLIENT_ENV, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 30000);
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Number(process.hrtime.bigint() - started) / 1e6 });
    });
    // A child that exits before reading its input reports by its exit code, not an uncaught EPIPE.
    child.stdin.on("error", () => undefined);
    child.stdin.end(opts.input ?? "");
  });
}

export async function waitFor(
  what: string,
  timeoutMs: number,
  check: () => Promise<boolean> | boolean,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A port that was free a moment ago (the OS picked it). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

async function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/**
 * psql `select 40 + 2` to an endpoint a program reported: a real PostgreSQL answering 42 proves
 * the whole path (proxy, forwarder, tunnel) carries a session, not only a TCP handshake.
 */
export async function assertPsqlAnswers(endpoint: { hostForConsumer: string; port: number }): Promise<void> {
  const r = await run("psql", [
    "-h",
    endpoint.hostForConsumer,
    "-p",
    String(endpoint.port),
    "-tAc",
    "select 40 + 2",
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), "42");
}

/**
 * `count` consecutive ports that are free now, from the calling file's own band (ports.ts), so
 * the proxy's ports stay that file's while another file runs beside it.
 */
export async function freePortRange(count: number, ports: FilePorts): Promise<PortRange> {
  for (;;) {
    // block() throws once the file's slot is used up, so this ends.
    const range = ports.block(count);
    const checks = await Promise.all(Array.from({ length: count }, (_, i) => portIsFree(range.from + i)));
    if (checks.every(Boolean)) return range;
  }
}

/** Ports with a listening socket owned by `pid`, from /proc (no ss/netstat parsing). */
export function listeningPorts(pid: number): number[] {
  let fds: string[];
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`);
  } catch {
    return [];
  }
  const inodes = new Set<string>();
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1] as string);
    } catch {
      // fd closed meanwhile
    }
  }
  const ports: number[] = [];
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    if (!fs.existsSync(table)) continue;
    for (const line of fs.readFileSync(table, "utf8").split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address is f[1] (hex ip:port), st is f[3] (0A = LISTEN), inode is f[9]
      if (f[3] === "0A" && inodes.has(f[9] ?? ""))
        ports.push(parseInt((f[1] ?? "").split(":")[1] ?? "0", 16));
    }
  }
  return [...new Set(ports)].sort((a, b) => a - b);
}

function alive(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

function exited(child: ChildProcess): Promise<void> {
  return alive(child) ? new Promise((resolve) => child.once("exit", () => resolve())) : Promise.resolve();
}

/** Sets the CPU affinity of every thread of `pid` (taskset's list syntax: "1", "0-2", "0,3"). */
export function pinProcess(pid: number, cpus: string): void {
  const r = spawnSync("taskset", ["-a", "-p", "-c", cpus, String(pid)], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`taskset -p -c ${cpus} ${pid} failed: ${r.stderr}`);
}

/** PIDs of every live descendant of `root`, from the parent field of /proc/<pid>/stat. */
export function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // exited meanwhile
    }
  }
  const out: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift() as number) ?? []) {
      out.push(child);
      queue.push(child);
    }
  }
  return out;
}

/** A real PostgreSQL 15, run as the postgres OS user in a temp dir, on 127.0.0.1 only. */
export class Postgres {
  private constructor(
    public readonly port: number,
    public readonly dir: string,
    private readonly child: ChildProcess,
    private log: string[],
  ) {}

  /**
   * `hba`: lines of a pg_hba.conf to use instead of initdb's trust-everything one; readiness is
   * then checked over the Unix socket in `dir`, which such a file should trust for postgres.
   */
  static async start(opts: { maxConnections?: number; hba?: string[] } = {}): Promise<Postgres> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-pg-"));
    const uid = Number(spawnSync("id", ["-u", "postgres"], { encoding: "utf8" }).stdout.trim());
    const gid = Number(spawnSync("id", ["-g", "postgres"], { encoding: "utf8" }).stdout.trim());
    fs.chownSync(dir, uid, gid);
    const data = path.join(dir, "data");
    const init = await run(
      "runuser",
      ["-u", "postgres", "--", `${PG_BIN}/initdb`, "-D", data, "-A", "trust", "-U", "postgres", "--no-sync"],
      {
        cwd: dir,
        timeoutMs: 60000,
      },
    );
    if (init.code !== 0) throw new Error(`initdb failed: ${init.stderr}`);
    const port = await freePort();
    const settings = {
      listen_addresses: "127.0.0.1",
      port: String(port),
      unix_socket_directories: dir,
      max_connections: String(opts.maxConnections ?? 100),
      fsync: "off",
      synchronous_commit: "off",
      full_page_writes: "off",
      shared_buffers: "64MB",
      ...(opts.hba ? { hba_file: path.join(dir, "pg_hba.conf") } : {}),
    };
    if (opts.hba) fs.writeFileSync(path.join(dir, "pg_hba.conf"), `${opts.hba.join("\n")}\n`);
    // Foreground under our control.
    const [cmd, ...argv] = postgresAsPostgres(data, settings);
    const child = spawn(cmd as string, argv, {
      cwd: dir,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const log: string[] = [];
    child.stderr?.on("data", (d: Buffer) => log.push(d.toString()));
    child.stdout?.on("data", (d: Buffer) => log.push(d.toString()));
    const pg = new Postgres(port, dir, child, log);
    try {
      await waitFor("PostgreSQL to accept connections", 30000, async () => {
        if (!alive(child)) throw new Error(`postgres exited: ${log.join("")}`);
        const r = await run(
          "psql",
          ["-h", opts.hba ? dir : "127.0.0.1", "-p", String(port), "-tAc", "select 1"],
          {
            timeoutMs: 5000,
          },
        );
        return r.code === 0;
      });
    } catch (err) {
      await pg.destroy();
      throw err;
    }
    return pg;
  }

  get running(): boolean {
    return alive(this.child);
  }

  logText(): string {
    return this.log.join("");
  }

  /** PID of the postmaster (runuser, our child, is its parent). */
  postmasterPid(): number {
    const pidFile = path.join(this.dir, "data", "postmaster.pid");
    return Number(fs.readFileSync(pidFile, "utf8").split("\n")[0]);
  }

  /**
   * Restricts the postmaster and every process it has forked to `cpus` (a taskset list such
   * as "0" or "0-2"); backends forked later inherit it from the postmaster.
   */
  pin(cpus: string): void {
    const root = this.postmasterPid();
    for (const pid of [root, ...descendants(root)]) pinProcess(pid, cpus);
  }

  /** `pg_ctl stop` (fast: sessions are cut, like a crashed or restarted instance). */
  async stop(mode: "fast" | "immediate" = "fast"): Promise<void> {
    if (!this.running) return;
    await run(
      "runuser",
      [
        "-u",
        "postgres",
        "--",
        `${PG_BIN}/pg_ctl`,
        "-D",
        path.join(this.dir, "data"),
        "-m",
        mode,
        "-w",
        "stop",
      ],
      {
        cwd: this.dir,
        timeoutMs: 20000,
      },
    );
    await Promise.race([exited(this.child), new Promise((r) => setTimeout(r, 5000))]);
  }

  /** Stops whatever is left and removes the temp dir; safe to call twice. */
  async destroy(): Promise<void> {
    await this.stop("immediate").catch(() => undefined);
    if (this.running) {
      const pidFile = path.join(this.dir, "data", "postmaster.pid");
      const pid = fs.existsSync(pidFile) ? Number(fs.readFileSync(pidFile, "utf8").split("\n")[0]) : NaN;
      if (Number.isInteger(pid) && pid > 0) process.kill(pid, "SIGKILL");
      this.child.kill("SIGKILL");
      await Promise.race([exited(this.child), new Promise((r) => setTimeout(r, 3000))]);
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** One HAProxy process in the foreground (-db); `replacing` soft-reloads over an older one (-sf). */
export class Haproxy {
  private output: string[] = [];

  private constructor(
    public readonly child: ChildProcess,
    public readonly configFile: string,
  ) {
    child.stdout?.on("data", (d: Buffer) => this.output.push(d.toString()));
    child.stderr?.on("data", (d: Buffer) => this.output.push(d.toString()));
  }

  get pid(): number {
    return this.child.pid as number;
  }

  get running(): boolean {
    return alive(this.child);
  }

  logText(): string {
    return this.output.join("");
  }

  /**
   * Starts HAProxy on `config` and waits until it listens on every port in `ports`. With
   * `replacing`, the old process is told to stop listening and finish its sessions
   * (HAProxy's soft stop); this waits until it no longer listens.
   */
  static async start(
    config: string,
    dir: string,
    ports: number[],
    replacing?: Haproxy,
    opts: { cpus?: string } = {},
  ): Promise<Haproxy> {
    const file = path.join(dir, `haproxy-${Date.now()}-${Math.floor(Math.random() * 1e6)}.cfg`);
    fs.writeFileSync(file, config);
    const args = ["-f", file, "-db", ...(replacing ? ["-sf", String(replacing.pid)] : [])];
    // taskset execs HAProxy, so the child's pid is HAProxy's own.
    const [cmd, argv] = opts.cpus ? ["taskset", ["-c", opts.cpus, HAPROXY, ...args]] : [HAPROXY, args];
    const proxy = new Haproxy(spawn(cmd, argv, { stdio: ["ignore", "pipe", "pipe"] }), file);
    try {
      await waitFor(`haproxy to listen on ${ports.join(", ")}`, 10000, () => {
        if (!proxy.running) throw new Error(`haproxy exited: ${proxy.logText()}`);
        const open = listeningPorts(proxy.pid);
        return ports.every((p) => open.includes(p));
      });
      if (replacing) {
        await waitFor(
          "the old haproxy to stop listening",
          10000,
          () => listeningPorts(replacing.pid).length === 0,
        );
      }
    } catch (err) {
      await proxy.stop();
      throw err;
    }
    return proxy;
  }

  /** Hard stop (SIGTERM, then SIGKILL); safe to call twice. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.child.kill("SIGTERM");
    await Promise.race([exited(this.child), new Promise((r) => setTimeout(r, 3000))]);
    if (this.running) {
      this.child.kill("SIGKILL");
      await exited(this.child);
    }
  }

  /** Resolves when the process has exited on its own (e.g. after a soft stop), or after timeoutMs. */
  async exit(timeoutMs: number): Promise<boolean> {
    await Promise.race([exited(this.child), new Promise((r) => setTimeout(r, timeoutMs))]);
    return !this.running;
  }
}

/** HAProxy's stats CSV, as rows keyed by column name. */
export async function haproxyStats(statsPort: number): Promise<Record<string, string>[]> {
  const body = await new Promise<string>((resolve, reject) => {
    http
      .get(`http://127.0.0.1:${statsPort}/stats;csv`, { timeout: 3000 }, (res) => {
        let text = "";
        res.on("data", (d: Buffer) => (text += d.toString()));
        res.on("end", () => resolve(text));
      })
      .on("error", reject);
  });
  const [header, ...lines] = body.trim().split("\n");
  const cols = (header ?? "").replace(/^#\s*/, "").split(",");
  return lines.map((l) => Object.fromEntries(l.split(",").map((v, i) => [cols[i] ?? String(i), v])));
}

/** Renders the proxy config for `connections` with our planner and renderer, bound to 127.0.0.1. */
export function renderLocal(
  connections: ProxyConnection[],
  range: PortRange,
  options: HaproxyOptions,
  previous?: Record<string, number>,
): { config: string; assignments: Record<string, number> } {
  const plan = planPorts({
    range,
    ids: listenerKeys(connections),
    previous,
    reserved: [options.statsPort ?? 0, options.healthPort ?? 0].filter((p) => p > 0),
  });
  return {
    config: renderHaproxyConfig(connections, plan.assignments, { bindAddress: "127.0.0.1", ...options }),
    assignments: plan.assignments,
  };
}

/**
 * Time from connect() to PostgreSQL's ReadyForQuery: TCP plus the startup handshake (trust
 * auth), in ms. Then a Terminate, so the server does not log an unexpected EOF.
 */
export function pgHandshakeMs(port: number, timeoutMs = 5000): Promise<number> {
  const params = Buffer.from("user\0postgres\0database\0postgres\0\0", "latin1");
  const startup = Buffer.alloc(8 + params.length);
  startup.writeInt32BE(startup.length, 0);
  startup.writeInt32BE(196608, 4); // protocol 3.0
  params.copy(startup, 8);
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const socket = net.connect({ host: "127.0.0.1", port, noDelay: true });
    let buf = Buffer.alloc(0);
    const timer = setTimeout(() => fail(new Error(`no ReadyForQuery within ${timeoutMs} ms`)), timeoutMs);
    const fail = (err: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(err);
    };
    socket.on("error", fail);
    socket.on("close", () => fail(new Error("connection closed before ReadyForQuery")));
    socket.on("connect", () => socket.write(startup));
    socket.on("data", (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 5) {
        const type = String.fromCharCode(buf[0] as number);
        const len = buf.readInt32BE(1);
        if (buf.length < 1 + len) break;
        if (type === "E")
          return fail(new Error(`server error: ${buf.subarray(5, 1 + len).toString("latin1")}`));
        if (type === "Z") {
          const ms = Number(process.hrtime.bigint() - started) / 1e6;
          clearTimeout(timer);
          socket.removeAllListeners("close");
          socket.end(Buffer.from([0x58, 0, 0, 0, 4])); // Terminate
          return resolve(ms);
        }
        buf = buf.subarray(1 + len);
      }
    });
  });
}

export function pgbenchTps(output: string): number {
  const m =
    /tps = ([\d.]+) \(without initial connection time\)/.exec(output) ?? /tps = ([\d.]+)/.exec(output);
  if (!m) throw new Error(`no tps in pgbench output:\n${output}`);
  return Number(m[1]);
}

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]);
  return ticks / 100; // USER_HZ is 100 on Linux
}
