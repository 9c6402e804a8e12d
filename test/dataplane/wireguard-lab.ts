import { ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { debianPostgres } from "../../host/local-clusters/images/host-rootfs";
import {
  WireguardConnection,
  WireguardPlan,
  WireguardPlanInput,
  planWireguard,
} from "../../network/wireguard/model/planner";
import { sessionResetScript } from "../../network/wireguard/model/cluster-config";
import { renderGatewayNftables } from "../../network/wireguard/model/render-nftables";
import { renderClientSetconf, renderGatewaySetconf } from "../../network/wireguard/model/render-wg-quick";
import { wireguardKeyProvider } from "../../network/wireguard/key-provider";
import { tcpProbe } from "../helpers/netns-data-service";
import { initdbAsPostgres, postgresAsPostgres } from "../helpers/pg-haproxy";

/**
 * A WireGuard lab in three network namespaces, shared by the data-plane test and the
 * benchmark. Everything lives inside namespaces this process creates, named with a random
 * suffix so runs never collide:
 *
 *   appA (192.0.2.2/30) ──veth── (192.0.2.1/30) ds (192.0.2.5/30) ──veth── (192.0.2.6/30) appB
 *
 * `ds` is the data-service network: the data-service host address 198.51.100.10 sits on
 * its loopback, NOT on an underlay interface, and no app namespace has a route to it over
 * the underlay. The rendered gateway filter additionally drops underlay traffic to the
 * served host:ports, so only the tunnel can carry data-service traffic even when an app
 * namespace adds its own route (the test checks both).
 *
 * The kernel has no WireGuard module, so each end runs Debian's userspace wireguard-go in
 * the foreground as a child of this process, each with its own interface name (its UAPI
 * socket directory /var/run/wireguard is shared by all namespaces).
 */

export type End = "ds" | "appA" | "appB";
export type AppCluster = "app-a" | "app-b";

export const DB_HOST = "198.51.100.10";
export const DB_PORT = 5432;
export const GATEWAY_UNDERLAY = { "app-a": "192.0.2.1", "app-b": "192.0.2.5" } as const;
export const APP_UNDERLAY = { "app-a": "192.0.2.2", "app-b": "192.0.2.6" } as const;
export const TUNNEL_CIDR = "100.96.0.0/24";
export const LISTEN_PORT = 51820;
const PG_BIN = debianPostgres().bin;
const UAPI_DIR = "/var/run/wireguard";

export const END_OF: Record<AppCluster, End> = { "app-a": "appA", "app-b": "appB" };

export interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

interface KeyPair {
  privateKey: string;
  publicKey: string;
}

/** A's connection dials the gateway's address on A's link, through the wireguardVPN enhancement. */
export function connectionA(port = DB_PORT, name = "pg-a"): WireguardConnection {
  return {
    name,
    appCluster: "app-a",
    instanceHost: DB_HOST,
    port,
    enhancements: [
      { InstanceType: "PostgreSQL" },
      { ConnectionType: "wireguardVPN", vpnEndpoint: GATEWAY_UNDERLAY["app-a"] },
    ],
  };
}

export function connectionB(): WireguardConnection {
  return { name: "pg-b", appCluster: "app-b", instanceHost: DB_HOST, port: DB_PORT };
}

/** The lab's plan input; B dials the default endpoint, the gateway's address on B's link. */
export function labPlanInput(
  connections: WireguardConnection[],
  previousAssignments?: Record<string, string>,
): WireguardPlanInput {
  return {
    tunnelCidr: TUNNEL_CIDR,
    listenPort: LISTEN_PORT,
    endpoint: `${GATEWAY_UNDERLAY["app-b"]}:${LISTEN_PORT}`,
    appClusters: ["app-a", "app-b"],
    connections,
    clusterCidrs: [
      { name: "app-a underlay", cidr: "192.0.2.0/30" },
      { name: "app-b underlay", cidr: "192.0.2.4/30" },
    ],
    dataServiceCidrs: [{ name: "ds data-service network", cidr: "198.51.100.0/24" }],
    previousAssignments,
  };
}

export class WireguardLab {
  readonly id = randomBytes(3).toString("hex");
  readonly ns: Record<End, string> = {
    ds: `kwds-${this.id}`,
    appA: `kwa-${this.id}`,
    appB: `kwb-${this.id}`,
  };
  readonly ifname: Record<End, string> = {
    ds: `wgd${this.id}`,
    appA: `wga${this.id}`,
    appB: `wgb${this.id}`,
  };
  readonly tmp = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-wg-lab-"));
  private readonly wgProcs = new Map<End, ChildProcess>();
  private readonly children = new Set<ChildProcess>();
  private pgData?: string;
  private keys?: Record<"gateway" | AppCluster, KeyPair>;
  private readonly onExit = () => this.cleanupSync();

  constructor() {
    // Last resort if the process dies without running the after hooks.
    process.once("exit", this.onExit);
  }

  /** Runs argv inside a namespace; never throws for a non-zero exit. */
  exec(ns: string, argv: string[], opts: { timeoutMs?: number; input?: string } = {}): Promise<ExecResult> {
    return new Promise((resolve) => {
      const child = execFile(
        "ip",
        ["netns", "exec", ns, ...argv],
        { timeout: opts.timeoutMs ?? 10000, killSignal: "SIGKILL", maxBuffer: 1 << 20 },
        (err, stdout, stderr) => {
          const code = err ? (typeof err.code === "number" ? err.code : -1) : 0;
          resolve({ code, stdout: stdout.toString(), stderr: stderr.toString() });
        },
      );
      if (opts.input !== undefined) child.stdin?.end(opts.input);
    });
  }

  /** Like exec, but a failure is an error with the command and its stderr. */
  async run(end: End, argv: string[], timeoutMs?: number): Promise<string> {
    const r = await this.exec(this.ns[end], argv, { timeoutMs });
    if (r.code !== 0) throw new Error(`[${end}] ${argv.join(" ")} exited ${r.code}: ${r.stderr.trim()}`);
    return r.stdout;
  }

  /** A long-running child inside a namespace, killed by cleanup. */
  spawnIn(end: End, argv: string[]): ChildProcess {
    const child = spawn("ip", ["netns", "exec", this.ns[end], ...argv], { stdio: ["pipe", "pipe", "pipe"] });
    this.children.add(child);
    child.once("exit", () => this.children.delete(child));
    child.on("error", () => undefined);
    return child;
  }

  /** Namespaces, veth pairs and addresses (the underlay). */
  async setupUnderlay(): Promise<void> {
    for (const ns of Object.values(this.ns)) execFileSync("ip", ["netns", "add", ns]);
    for (const end of Object.keys(this.ns) as End[]) await this.run(end, ["ip", "link", "set", "lo", "up"]);
    const links: [AppCluster, End][] = [
      ["app-a", "appA"],
      ["app-b", "appB"],
    ];
    for (const [cluster, end] of links) {
      const app = `v${end === "appA" ? "a" : "b"}${this.id}`;
      const gw = `${app}g`;
      execFileSync("ip", [
        "link",
        "add",
        app,
        "netns",
        this.ns[end],
        "type",
        "veth",
        "peer",
        "name",
        gw,
        "netns",
        this.ns.ds,
      ]);
      await this.run(end, ["ip", "addr", "add", `${APP_UNDERLAY[cluster]}/30`, "dev", app]);
      await this.run(end, ["ip", "link", "set", app, "up"]);
      await this.run("ds", ["ip", "addr", "add", `${GATEWAY_UNDERLAY[cluster]}/30`, "dev", gw]);
      await this.run("ds", ["ip", "link", "set", gw, "up"]);
    }
    // The data-service host: on ds's loopback, so no underlay interface carries its address.
    await this.run("ds", ["ip", "addr", "add", `${DB_HOST}/32`, "dev", "lo"]);
  }

  /** Key pairs made by the project's dynamic provider, as `pulumi up` would. */
  async makeKeys(): Promise<void> {
    const make = async () => {
      const { outs } = await wireguardKeyProvider.create({ rotation: "initial" });
      return { privateKey: outs!.privateKey, publicKey: outs!.publicKey };
    };
    this.keys = { gateway: await make(), "app-a": await make(), "app-b": await make() };
  }

  private requireKeys() {
    if (!this.keys) throw new Error("makeKeys() first");
    return this.keys;
  }

  /** Starts wireguard-go in the foreground for one end and waits for its UAPI socket. */
  async startWireguard(end: End): Promise<void> {
    const ifname = this.ifname[end];
    const child = this.spawnIn(end, ["wireguard-go", "-f", ifname]);
    let stderr = "";
    child.stderr?.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    child.stdout?.resume();
    this.wgProcs.set(end, child);
    const sock = path.join(UAPI_DIR, `${ifname}.sock`);
    const deadline = Date.now() + 5000;
    while (!fs.existsSync(sock)) {
      if (child.exitCode !== null)
        throw new Error(`wireguard-go ${ifname} exited ${child.exitCode}: ${stderr}`);
      if (Date.now() > deadline)
        throw new Error(`wireguard-go ${ifname}: no UAPI socket after 5 s: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Stops one end's wireguard-go (its interface goes with it). */
  async stopWireguard(end: End): Promise<void> {
    const child = this.wgProcs.get(end);
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
    await exited;
    clearTimeout(timer);
    this.wgProcs.delete(end);
  }

  private writeSecretFile(name: string, content: string): string {
    const file = path.join(this.tmp, name);
    fs.writeFileSync(file, content, { mode: 0o600 });
    return file;
  }

  /** Gateway: rendered setconf file, then address and link, as wg-quick would. */
  async configureGateway(plan: WireguardPlan): Promise<void> {
    const file = this.writeSecretFile("gateway.conf", this.gatewayConfig(plan));
    const ifname = this.ifname.ds;
    await this.run("ds", ["wg", "setconf", ifname, file]);
    await this.run("ds", ["ip", "addr", "replace", plan.gateway.interface.address, "dev", ifname]);
    await this.run("ds", ["ip", "link", "set", ifname, "up"]);
  }

  gatewayConfig(plan: WireguardPlan): string {
    const keys = this.requireKeys();
    return renderGatewaySetconf(plan, {
      privateKey: keys.gateway.privateKey,
      clientPublicKeys: { "app-a": keys["app-a"].publicKey, "app-b": keys["app-b"].publicKey },
    });
  }

  clientConfig(plan: WireguardPlan, cluster: AppCluster): string {
    const keys = this.requireKeys();
    return renderClientSetconf(plan, cluster, {
      privateKey: keys[cluster].privateKey,
      gatewayPublicKey: keys.gateway.publicKey,
    });
  }

  /** Applies a changed gateway config live, as the gateway pod does: wg syncconf, no restart. */
  async syncGateway(plan: WireguardPlan): Promise<void> {
    const file = this.writeSecretFile("gateway.conf", this.gatewayConfig(plan));
    await this.run("ds", ["wg", "syncconf", this.ifname.ds, file]);
  }

  /** Client: rendered setconf file, address, link and one route per AllowedIPs entry. */
  async configureClient(plan: WireguardPlan, cluster: AppCluster, sync = false): Promise<void> {
    const end = END_OF[cluster];
    const client = plan.clients.find((c) => c.appCluster === cluster);
    if (!client) throw new Error(`no client ${cluster} in plan`);
    const ifname = this.ifname[end];
    const file = this.writeSecretFile(`${cluster}.conf`, this.clientConfig(plan, cluster));
    await this.run(end, ["wg", sync ? "syncconf" : "setconf", ifname, file]);
    await this.run(end, ["ip", "addr", "replace", client.interface.address, "dev", ifname]);
    await this.run(end, ["ip", "link", "set", ifname, "up"]);
    for (const route of client.routes) await this.run(end, ["ip", "route", "replace", route, "dev", ifname]);
  }

  /**
   * Drops a client's session with the gateway and adds the gateway peer again from the
   * client's rendered config, with the very commands the client pod's tunnel container runs
   * (sessionResetScript).
   */
  async resetClientSession(plan: WireguardPlan, cluster: AppCluster): Promise<void> {
    const file = this.writeSecretFile(`${cluster}.conf`, this.clientConfig(plan, cluster));
    const reset = sessionResetScript(this.ifname[END_OF[cluster]], `cat ${file}`);
    await this.run(END_OF[cluster], ["sh", "-c", `peer='${this.requireKeys().gateway.publicKey}'\n${reset}`]);
  }

  /** Loads the rendered gateway filter into ds (atomic replace). */
  async loadFilter(plan: WireguardPlan): Promise<void> {
    const file = path.join(this.tmp, "gateway.nft");
    fs.writeFileSync(file, renderGatewayNftables(plan, { interfaceName: this.ifname.ds }));
    await this.run("ds", ["nft", "-f", file]);
  }

  /** Plans, starts and configures all three ends and the filter. */
  async bringUp(connections: WireguardConnection[]): Promise<WireguardPlan> {
    const plan = planWireguard(labPlanInput(connections));
    for (const end of ["ds", "appA", "appB"] as End[]) await this.startWireguard(end);
    await this.configureGateway(plan);
    await this.loadFilter(plan);
    await this.configureClient(plan, "app-a");
    await this.configureClient(plan, "app-b");
    return plan;
  }

  /** PostgreSQL 15 in ds, listening only on the data-service host address. */
  async startPostgres(): Promise<void> {
    fs.chmodSync(this.tmp, 0o711);
    const base = path.join(this.tmp, "pg");
    this.pgData = initdbAsPostgres(base);
    // Trust only the tunnel; the underlay never gets this far (the gateway filter drops it).
    fs.appendFileSync(path.join(this.pgData, "pg_hba.conf"), `host all all ${TUNNEL_CIDR} trust\n`);
    const pg = this.spawnIn(
      "ds",
      postgresAsPostgres(this.pgData, {
        listen_addresses: DB_HOST,
        port: DB_PORT,
        unix_socket_directories: base,
        fsync: "off",
        shared_buffers: "16MB",
      }),
    );
    pg.stdout?.resume();
    pg.stderr?.resume();
    const deadline = Date.now() + 20000;
    for (;;) {
      const r = await this.exec(this.ns.ds, [`${PG_BIN}/pg_isready`, "-h", DB_HOST, "-p", String(DB_PORT)]);
      if (r.code === 0) return;
      if (pg.exitCode !== null) throw new Error(`postgres exited ${pg.exitCode}`);
      if (Date.now() > deadline) throw new Error("postgres not ready after 20 s");
      await new Promise((res) => setTimeout(res, 200));
    }
  }

  /** One psql command from an app namespace to the data-service host. */
  psql(end: End, sql: string, connectTimeoutSec = 3): Promise<ExecResult> {
    return this.exec(
      this.ns[end],
      [
        "psql",
        "-X",
        "-At",
        "-v",
        "ON_ERROR_STOP=1",
        `host=${DB_HOST} port=${DB_PORT} user=postgres dbname=postgres connect_timeout=${connectTimeoutSec}`,
        "-c",
        sql,
      ],
      { timeoutMs: (connectTimeoutSec + 5) * 1000 },
    );
  }

  /** A TCP server in ds that answers every connection (for probes and the benchmark). */
  async startTcpServer(host: string, port: number): Promise<void> {
    const script = [
      "const net = require('net');",
      "const [host, port] = process.argv.slice(1);",
      "net.createServer((s) => { s.on('error', () => {}); s.end('ok'); })",
      "  .listen(Number(port), host, () => console.log('listening'));",
    ].join("\n");
    const child = this.spawnIn("ds", ["node", "-e", script, host, String(port)]);
    child.stderr?.resume();
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`TCP server ${host}:${port} did not start`)), 5000);
      child.stdout?.once("data", () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Connects once from an end: "open", "timeout" or the socket error code. */
  tcpProbe(end: End, host: string, port: number, timeoutMs: number): Promise<string> {
    return tcpProbe(this.ns[end], host, port, timeoutMs);
  }

  /** Stops everything this lab started and deletes its namespaces. */
  async cleanup(): Promise<void> {
    for (const end of [...this.wgProcs.keys()]) await this.stopWireguard(end).catch(() => undefined);
    this.stopPostgres();
    for (const child of [...this.children]) {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
        if (child.exitCode === null) child.kill("SIGKILL");
      }
    }
    this.cleanupSync();
    process.removeListener("exit", this.onExit);
  }

  private stopPostgres(): void {
    if (!this.pgData) return;
    try {
      const pid = Number(fs.readFileSync(path.join(this.pgData, "postmaster.pid"), "utf8").split("\n")[0]);
      // SIGQUIT: immediate shutdown; the data dir is thrown away anyway.
      if (pid > 0) process.kill(pid, "SIGQUIT");
    } catch {
      // not running
    }
  }

  private cleanupSync(): void {
    for (const child of this.children) if (child.exitCode === null) child.kill("SIGKILL");
    this.stopPostgres();
    for (const ns of Object.values(this.ns)) {
      try {
        execFileSync("ip", ["netns", "del", ns], { stdio: "ignore" });
      } catch {
        // already gone
      }
    }
    for (const ifname of Object.values(this.ifname))
      fs.rmSync(path.join(UAPI_DIR, `${ifname}.sock`), { force: true });
    fs.rmSync(this.tmp, { recursive: true, force: true });
  }
}
