import { ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { debianPostgres } from "../../host/local-clusters/images/host-rootfs";
import { initdbAsPostgres, postgresAsPostgres } from "./pg-haproxy";

/**
 * A data-service network in a network namespace this test creates: host addresses on its
 * loopback (so nothing outside the namespace routes to them) and a real PostgreSQL 15
 * listening on them, trusting only the WireGuard tunnel's addresses. Used by the WireGuard
 * e2e test and benchmark; everything it starts or creates goes with `destroy()`.
 */

const PG_BIN = debianPostgres().bin;

export interface NsResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs argv inside a namespace; never throws for a non-zero exit. */
export function nsExec(
  ns: string,
  argv: string[],
  opts: { timeoutMs?: number; input?: string } = {},
): Promise<NsResult> {
  return new Promise((resolve) => {
    const child = execFile(
      "ip",
      ["netns", "exec", ns, ...argv],
      {
        timeout: opts.timeoutMs ?? 15000,
        killSignal: "SIGKILL",
        maxBuffer: 1 << 20,
        env: { ...process.env, PGSSLMODE: "disable", PGCONNECT_TIMEOUT: "5" },
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : -1) : 0;
        resolve({ code, stdout: stdout.toString(), stderr: stderr.toString() });
      },
    );
    // A child that exits before reading its input reports by its exit code, not an uncaught EPIPE.
    child.stdin?.on("error", () => undefined);
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

/** Connects once from a namespace: "open", "timeout" or the socket error code (e.g. ECONNREFUSED). */
export async function tcpProbe(ns: string, host: string, port: number, timeoutMs = 3000): Promise<string> {
  const script = [
    "const [host, port, ms] = process.argv.slice(1);",
    "const s = require('net').connect(Number(port), host, () => { console.log('open'); process.exit(0); });",
    "s.on('error', (e) => { console.log(e.code); process.exit(1); });",
    "setTimeout(() => { console.log('timeout'); process.exit(2); }, Number(ms));",
  ].join("\n");
  const r = await nsExec(ns, [process.execPath, "-e", script, host, String(port), String(timeoutMs)], {
    timeoutMs: timeoutMs + 5000,
  });
  return r.stdout.trim();
}

/** One psql command from a namespace. */
export function psqlIn(ns: string, host: string, port: number, sql: string): Promise<NsResult> {
  return nsExec(ns, [
    "psql",
    "-X",
    "-At",
    "-v",
    "ON_ERROR_STOP=1",
    `host=${host} port=${port} user=postgres dbname=postgres connect_timeout=5`,
    "-c",
    sql,
  ]);
}

export class NetnsDataService {
  readonly id = randomBytes(3).toString("hex");
  readonly ns = `kwds-${this.id}`;
  readonly tmp = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-wg-ds-"));
  private pg?: ChildProcess;
  private pgData?: string;
  private readonly onExit = () => this.destroySync();

  /** @param hosts addresses put on the namespace's loopback; PostgreSQL listens on each. */
  constructor(
    readonly hosts: string[],
    readonly port = 5432,
    private readonly trusted = "100.96.0.0/24",
  ) {
    process.once("exit", this.onExit);
  }

  async start(): Promise<void> {
    execFileSync("ip", ["netns", "add", this.ns]);
    execFileSync("ip", ["netns", "exec", this.ns, "ip", "link", "set", "lo", "up"]);
    for (const h of this.hosts)
      execFileSync("ip", ["netns", "exec", this.ns, "ip", "addr", "add", `${h}/32`, "dev", "lo"]);
    fs.chmodSync(this.tmp, 0o711);
    const base = path.join(this.tmp, "pg");
    this.pgData = initdbAsPostgres(base);
    // Only the tunnel is trusted: a session that did not come through it is refused by PostgreSQL too.
    fs.writeFileSync(path.join(this.pgData, "pg_hba.conf"), `host all all ${this.trusted} trust\n`);
    this.pg = spawn(
      "ip",
      [
        "netns",
        "exec",
        this.ns,
        ...postgresAsPostgres(this.pgData, {
          listen_addresses: this.hosts.join(","),
          port: this.port,
          unix_socket_directories: base,
          fsync: "off",
          shared_buffers: "32MB",
          max_connections: 60,
        }),
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    this.pg.stderr?.resume();
    const deadline = Date.now() + 30000;
    for (;;) {
      const r = await nsExec(this.ns, [
        `${PG_BIN}/pg_isready`,
        "-h",
        this.hosts[0] as string,
        "-p",
        String(this.port),
      ]);
      if (r.code === 0) return;
      if (this.pg.exitCode !== null) throw new Error(`postgres exited ${this.pg.exitCode}`);
      if (Date.now() > deadline) throw new Error("postgres not ready after 30 s");
      await new Promise((res) => setTimeout(res, 200));
    }
  }

  exec(argv: string[], timeoutMs?: number): Promise<NsResult> {
    return nsExec(this.ns, argv, { timeoutMs });
  }

  destroy(): void {
    this.destroySync();
    process.removeListener("exit", this.onExit);
  }

  private destroySync(): void {
    if (this.pgData) {
      try {
        const pid = Number(fs.readFileSync(path.join(this.pgData, "postmaster.pid"), "utf8").split("\n")[0]);
        // SIGQUIT: immediate shutdown; the data directory is thrown away.
        if (pid > 0) process.kill(pid, "SIGQUIT");
      } catch {
        // not running
      }
    }
    if (this.pg && this.pg.exitCode === null) this.pg.kill("SIGKILL");
    try {
      execFileSync("ip", ["netns", "del", this.ns], { stdio: "ignore" });
    } catch {
      // already gone
    }
    fs.rmSync(this.tmp, { recursive: true, force: true });
  }
}
