import * as pulumi from "@pulumi/pulumi";

/**
 * The WireGuard path of the bridge's `local` target, where no kubelet runs the rendered
 * pods: the same plan, run as wireguard-go processes in network namespaces this project
 * creates (the way the local proxy runs as HAProxy processes).
 *
 * - `LocalWireguardClient`, one per group (an app cluster's consumer namespace): a network
 *   namespace for the app side, a veth link to the data-service namespace, wireguard-go with
 *   the key pair from the key provider, and its peer on the shared gateway. The gateway (one
 *   wireguard-go interface in the data-service namespace, its key in a 0600 file, the
 *   rendered nftables table) is started by the first client and stopped with the last.
 * - `LocalWireguardAllowedHosts`, one per group: the client's AllowedIPs and routes and the
 *   gateway filter's flows of this client, changed in place (`wg set`, one `nft -f`
 *   transaction), so a connection coming or going never re-keys the tunnel.
 * - `LocalTcpForwarder`, one per connection: socat in the client namespace, the forwarder
 *   the app side dials (the pod's `socat` container in the Kubernetes rendering).
 *
 * The processes are detached, with PATH as their only environment, so they outlive the
 * engine that started them (and are not taken for the engine's leftovers, bridge/orphans.ts);
 * their pid files tie them to the resources. Private keys reach wireguard-go only through
 * `wg set … private-key <file>` with a 0600 file that is removed at once: never argv, an
 * environment or a log. Like the other dynamic providers, every method requires what it
 * needs at call time and calls helpers through `this`, so the serialized provider runs in
 * the engine's provider process without this project's modules.
 */

export interface LocalGatewayInputs {
  /** Directory of the shared gateway: key, pid file, claims, lock (localGatewayNames). */
  gatewayDir: string;
  dataNetns: string;
  gatewayIfname: string;
  tunnelCidr: string;
  /** The gateway's tunnel address in CIDR notation, e.g. 100.96.0.1/24. */
  gatewayAddress: string;
  listenPort: number;
  /** The rendered gateway filter (render-nftables.ts), loaded when the gateway starts. */
  gatewayFilter: string;
  /** The filter's table, to add and remove set elements in. */
  nftTable: string;
  linkBase: string;
  linkCount: number;
}

export interface LocalWireguardClientInputs extends LocalGatewayInputs {
  group: string;
  netns: string;
  ifname: string;
  linkIfname: string;
  /** Secret: the client's private key (from WireguardKeyPair). */
  privateKey: string;
  publicKey: string;
}

export interface LocalWireguardClientOutputs extends LocalWireguardClientInputs {
  tunnelAddress: string;
  gatewayPublicKey: string;
  /** host:port of the gateway on the client's link. */
  endpoint: string;
}

type ExecOpts = { input?: string; allowFail?: boolean };

/** Running commands, shared by the providers below. */
interface Commands {
  /** Runs argv with PATH as the only environment; throws with its stderr unless allowFail. */
  sh(argv: string[], opts?: ExecOpts): string;
  /** The same inside a network namespace (`ip netns exec`). */
  inNs(ns: string, argv: string[], opts?: ExecOpts): string;
}

/**
 * Spread into each provider object rather than called from module scope: Pulumi serialises a
 * dynamic provider by its closure (`serializeFunction(() => provider)` in
 * @pulumi/pulumi dynamic/index.ts), so the methods copied into the provider's own properties
 * travel with it as functions, and `this` is the provider at call time, wherever it runs.
 * Nothing here may close over module state: each call requires what it needs.
 */
const commands: Commands = {
  sh(argv, opts = {}) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { spawnSync } = require("node:child_process") as typeof import("node:child_process");
    const r = spawnSync(argv[0] as string, argv.slice(1), {
      input: opts.input,
      encoding: "utf8",
      timeout: 20000,
      env: { PATH: process.env.PATH ?? "/usr/sbin:/usr/bin:/sbin:/bin" },
    });
    if (r.status !== 0 && !opts.allowFail) {
      throw new Error(`${argv.join(" ")} exited ${r.status ?? r.signal}: ${(r.stderr ?? "").trim()}`);
    }
    return r.stdout ?? "";
  },

  inNs(ns, argv, opts) {
    return this.sh(["ip", "netns", "exec", ns, ...argv], opts);
  },
};

interface Helpers extends Commands {
  alive(pidFile: string): number | undefined;
  daemon(ns: string, argv: string[], pidFile: string, logFile: string): number;
  stop(pidFile: string): void;
  waitFor(what: string, check: () => boolean, ms: number): void;
  lock<T>(dir: string, fn: () => T): T;
  claim(dir: string, kind: string, candidates: string[], owner: string): string;
  release(dir: string, kind: string, owner: string): void;
  owned(dir: string, kind: string): string[];
  hosts(cidr: string): string[];
  links(base: string, count: number): string[];
  linkAddresses(index: string, base: string): { gateway: string; client: string };
  writeSecret(file: string, content: string): void;
  gatewayUp(g: LocalGatewayInputs): string;
  gatewayDown(g: LocalGatewayInputs): void;
  gatewayPeers(g: LocalGatewayInputs): string[];
  clientUp(i: LocalWireguardClientInputs): LocalWireguardClientOutputs;
  clientHealthy(o: LocalWireguardClientOutputs): boolean;
}

type ClientProvider = pulumi.dynamic.ResourceProvider<
  LocalWireguardClientInputs,
  LocalWireguardClientOutputs
> &
  Helpers;

export const localWireguardClientProvider: ClientProvider & {
  diff: NonNullable<ClientProvider["diff"]>;
  update: NonNullable<ClientProvider["update"]>;
  read: NonNullable<ClientProvider["read"]>;
  delete: NonNullable<ClientProvider["delete"]>;
} = {
  ...commands,

  alive(pidFile) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const fs = require("node:fs") as typeof import("node:fs");
    try {
      const pid = Number(fs.readFileSync(pidFile, "utf8").trim());
      if (!Number.isInteger(pid) || pid <= 0) return undefined;
      process.kill(pid, 0);
      // A recycled pid is not ours: the process must still be the one we started.
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (!/wireguard-go|socat/.test(cmd)) return undefined;
      return pid;
    } catch {
      return undefined;
    }
  },

  daemon(ns, argv, pidFile, logFile) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const fs = require("node:fs") as typeof import("node:fs");
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { spawn } = require("node:child_process") as typeof import("node:child_process");
    const log = fs.openSync(logFile, "a", 0o600);
    // `ip netns exec` execs the command itself (no fork), so the pid is the daemon's.
    const child = spawn("ip", ["netns", "exec", ns, ...argv], {
      detached: true,
      stdio: ["ignore", log, log],
      env: { PATH: process.env.PATH ?? "/usr/sbin:/usr/bin:/sbin:/bin" },
    });
    fs.closeSync(log);
    child.unref();
    if (!child.pid) throw new Error(`could not start ${argv.join(" ")} in ${ns}`);
    fs.writeFileSync(pidFile, `${child.pid}\n`);
    return child.pid;
  },

  stop(pidFile) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const fs = require("node:fs") as typeof import("node:fs");
    const pid = this.alive(pidFile);
    if (pid) {
      process.kill(pid, "SIGTERM");
      const deadline = Date.now() + 3000;
      while (Date.now() < deadline) {
        try {
          process.kill(pid, 0);
        } catch {
          break;
        }
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
      }
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone
      }
    }
    fs.rmSync(pidFile, { force: true });
  },

  waitFor(what, check, ms) {
    const deadline = Date.now() + ms;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    }
  },

  lock(dir, fn) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const fs = require("node:fs") as typeof import("node:fs");
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = `${dir}/lock`;
    // Groups reconcile in parallel and share the gateway: one at a time changes it. A lock
    // whose holder is gone (killed bridge) is taken over.
    this.waitFor(
      "the WireGuard gateway lock",
      () => {
        try {
          fs.writeFileSync(file, `${process.pid}\n`, { flag: "wx" });
          return true;
        } catch {
          const holder = Number(fs.readFileSync(file, "utf8").trim());
          try {
            process.kill(holder, 0);
          } catch {
            fs.rmSync(file, { force: true });
          }
          return false;
        }
      },
      60000,
    );
    try {
      return fn();
    } finally {
      fs.rmSync(file, { force: true });
    }
  },

  claim(dir, kind, candidates, owner) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const fs = require("node:fs") as typeof import("node:fs");
    const d = `${dir}/${kind}`;
    fs.mkdirSync(d, { recursive: true });
    const existing = this.owned(dir, kind).find((c) => fs.readFileSync(`${d}/${c}`, "utf8") === owner);
    if (existing) return existing;
    for (const c of candidates) {
      try {
        fs.writeFileSync(`${d}/${c}`, owner, { flag: "wx" });
        return c;
      } catch {
        // taken
      }
    }
    throw new Error(`no free ${kind} left for ${owner} (all ${candidates.length} taken)`);
  },

  release(dir, kind, owner) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const fs = require("node:fs") as typeof import("node:fs");
    for (const c of this.owned(dir, kind)) {
      if (fs.readFileSync(`${dir}/${kind}/${c}`, "utf8") === owner) fs.rmSync(`${dir}/${kind}/${c}`);
    }
  },

  owned(dir, kind) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const fs = require("node:fs") as typeof import("node:fs");
    try {
      return fs.readdirSync(`${dir}/${kind}`);
    } catch {
      return [];
    }
  },

  hosts(cidr) {
    const [ip, bits] = cidr.split("/");
    const toInt = (a: string) => a.split(".").reduce((n, o) => n * 256 + Number(o), 0);
    const toIp = (n: number) => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join(".");
    const size = 2 ** (32 - Number(bits));
    const first = toInt(ip as string) - (toInt(ip as string) % size);
    // The network address, the gateway (first + 1) and the broadcast address are not handed out.
    const out: string[] = [];
    for (let a = first + 2; a < first + size - 1; a++) out.push(toIp(a));
    return out;
  },

  links(base, count) {
    return Array.from({ length: count }, (_, i) => `${base}+${i}`);
  },

  linkAddresses(index, base) {
    const n = Number(index.split("+")[1]);
    const toInt = (a: string) => a.split(".").reduce((x, o) => x * 256 + Number(o), 0);
    const toIp = (x: number) => [24, 16, 8, 0].map((s) => Math.floor(x / 2 ** s) % 256).join(".");
    const net = toInt(base) + 4 * n;
    return { gateway: toIp(net + 1), client: toIp(net + 2) };
  },

  writeSecret(file, content) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const fs = require("node:fs") as typeof import("node:fs");
    fs.rmSync(file, { force: true });
    fs.writeFileSync(file, content, { mode: 0o600, flag: "wx" });
  },

  /** Starts the shared gateway unless it runs; returns its public key. Call under the lock. */
  gatewayUp(g) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const fs = require("node:fs") as typeof import("node:fs");
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const crypto = require("node:crypto") as typeof import("node:crypto");
    fs.mkdirSync(g.gatewayDir, { recursive: true, mode: 0o700 });
    const keyFile = `${g.gatewayDir}/private.key`;
    if (!fs.existsSync(keyFile)) {
      // The gateway is shared by every group's stack, so its key cannot live in one of them:
      // it is made here (X25519, as the key provider makes them) and kept in a 0600 file.
      const { privateKey } = crypto.generateKeyPairSync("x25519");
      const raw = privateKey.export({ format: "der", type: "pkcs8" }).subarray(-32).toString("base64");
      this.writeSecret(keyFile, `${raw}\n`);
    }
    const pidFile = `${g.gatewayDir}/gateway.pid`;
    const sock = `/var/run/wireguard/${g.gatewayIfname}.sock`;
    if (!this.alive(pidFile) || !fs.existsSync(sock)) {
      this.stop(pidFile);
      fs.rmSync(sock, { force: true });
      this.daemon(
        g.dataNetns,
        ["wireguard-go", "-f", g.gatewayIfname],
        pidFile,
        `${g.gatewayDir}/gateway.log`,
      );
      this.waitFor(`wireguard-go ${g.gatewayIfname}`, () => fs.existsSync(sock), 5000);
      this.inNs(g.dataNetns, [
        "wg",
        "set",
        g.gatewayIfname,
        "listen-port",
        String(g.listenPort),
        "private-key",
        keyFile,
      ]);
      this.inNs(g.dataNetns, ["ip", "addr", "replace", g.gatewayAddress, "dev", g.gatewayIfname]);
      this.inNs(g.dataNetns, ["ip", "link", "set", g.gatewayIfname, "up"]);
      // A new gateway has no peers and no flows: the clients' and allowed hosts' diffs see
      // that and put theirs back on the next update.
      this.inNs(g.dataNetns, ["nft", "-f", "-"], { input: g.gatewayFilter });
    }
    return this.inNs(g.dataNetns, ["wg", "show", g.gatewayIfname, "public-key"]).trim();
  },

  gatewayPeers(g) {
    const out = this.inNs(g.dataNetns, ["wg", "show", g.gatewayIfname, "peers"], { allowFail: true });
    return out.split("\n").filter(Boolean);
  },

  /** Stops the gateway when no client holds an address any more. Call under the lock. */
  gatewayDown(g) {
    if (this.owned(g.gatewayDir, "addresses").length > 0) return;
    this.stop(`${g.gatewayDir}/gateway.pid`);
    this.inNs(g.dataNetns, ["nft", "delete", "table", "inet", g.nftTable], { allowFail: true });
  },

  clientUp(i) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const fs = require("node:fs") as typeof import("node:fs");
    return this.lock(i.gatewayDir, () => {
      const gatewayPublicKey = this.gatewayUp(i);
      const tunnelAddress = this.claim(i.gatewayDir, "addresses", this.hosts(i.tunnelCidr), i.group);
      const link = this.claim(i.gatewayDir, "links", this.links(i.linkBase, i.linkCount), i.group);
      const addr = this.linkAddresses(link, i.linkBase);
      const namespaces = this.sh(["ip", "netns", "list"]);
      if (!new RegExp(`^${i.netns}( |$)`, "m").test(namespaces)) this.sh(["ip", "netns", "add", i.netns]);
      this.inNs(i.netns, ["ip", "link", "set", "lo", "up"]);
      const hasLink = this.inNs(i.netns, ["ip", "link", "show", "kw0"], { allowFail: true }) !== "";
      if (!hasLink) {
        this.inNs(i.dataNetns, ["ip", "link", "del", i.linkIfname], { allowFail: true });
        this.sh([
          "ip",
          "link",
          "add",
          "kw0",
          "netns",
          i.netns,
          "type",
          "veth",
          "peer",
          "name",
          i.linkIfname,
          "netns",
          i.dataNetns,
        ]);
      }
      this.inNs(i.netns, ["ip", "addr", "replace", `${addr.client}/30`, "dev", "kw0"]);
      this.inNs(i.netns, ["ip", "link", "set", "kw0", "up"]);
      this.inNs(i.dataNetns, ["ip", "addr", "replace", `${addr.gateway}/30`, "dev", i.linkIfname]);
      this.inNs(i.dataNetns, ["ip", "link", "set", i.linkIfname, "up"]);

      const pidFile = `${i.gatewayDir}/${i.netns}.pid`;
      const sock = `/var/run/wireguard/${i.ifname}.sock`;
      if (!this.alive(pidFile) || !fs.existsSync(sock)) {
        this.stop(pidFile);
        fs.rmSync(sock, { force: true });
        this.daemon(i.netns, ["wireguard-go", "-f", i.ifname], pidFile, `${i.gatewayDir}/${i.netns}.log`);
        this.waitFor(`wireguard-go ${i.ifname}`, () => fs.existsSync(sock), 5000);
      }
      // The gateway learns the peer first: the client's first handshake (sent as soon as it
      // has a peer with a keepalive) is answered instead of dropped and retried 5 s later.
      this.inNs(i.dataNetns, [
        "wg",
        "set",
        i.gatewayIfname,
        "peer",
        i.publicKey,
        "allowed-ips",
        `${tunnelAddress}/32`,
      ]);
      const endpoint = `${addr.gateway}:${i.listenPort}`;
      const gatewayTunnel = i.gatewayAddress.split("/")[0] as string;
      const keyFile = `${i.gatewayDir}/${i.netns}.key`;
      this.writeSecret(keyFile, `${i.privateKey}\n`);
      try {
        // Only the gateway's /32 here: the allowed hosts resource adds the data-service hosts
        // (`wg set` keeps what it does not name, so neither overwrites the other's work).
        const current = this.inNs(i.netns, ["wg", "show", i.ifname, "allowed-ips"], { allowFail: true });
        const kept = (current.split("\t")[1] ?? "")
          .trim()
          .split(/\s+/)
          .filter((a) => a && a !== "(none)");
        const allowed = [...new Set([`${gatewayTunnel}/32`, ...kept])].join(",");
        this.inNs(i.netns, [
          "wg",
          "set",
          i.ifname,
          "private-key",
          keyFile,
          "peer",
          gatewayPublicKey,
          "endpoint",
          endpoint,
          "allowed-ips",
          allowed,
          "persistent-keepalive",
          "25",
        ]);
      } finally {
        fs.rmSync(keyFile, { force: true });
      }
      this.inNs(i.netns, ["ip", "addr", "replace", `${tunnelAddress}/32`, "dev", i.ifname]);
      this.inNs(i.netns, ["ip", "link", "set", i.ifname, "up"]);
      this.inNs(i.netns, ["ip", "route", "replace", `${gatewayTunnel}/32`, "dev", i.ifname]);
      return { ...i, tunnelAddress, gatewayPublicKey, endpoint };
    });
  },

  clientHealthy(o) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const fs = require("node:fs") as typeof import("node:fs");
    if (!this.alive(`${o.gatewayDir}/${o.netns}.pid`)) return false;
    if (!this.alive(`${o.gatewayDir}/gateway.pid`)) return false;
    if (!fs.existsSync(`${o.gatewayDir}/addresses/${o.tunnelAddress}`)) return false;
    return this.gatewayPeers(o).includes(o.publicKey);
  },

  create(inputs) {
    const outs = this.clientUp(inputs);
    return Promise.resolve({ id: `${inputs.dataNetns}/${inputs.netns}`, outs });
  },

  diff(_id, olds, news) {
    const replaces = (
      ["netns", "ifname", "linkIfname", "dataNetns", "gatewayDir", "tunnelCidr"] as const
    ).filter((k) => olds[k] !== news[k]);
    if (replaces.length > 0) return Promise.resolve({ changes: true, replaces, deleteBeforeReplace: true });
    // A dead wireguard-go (reboot, kill) or a gateway that lost this peer is a change: the
    // update heals it with the same key and address, so every `up` repairs the path.
    const changed =
      olds.privateKey !== news.privateKey ||
      olds.publicKey !== news.publicKey ||
      olds.listenPort !== news.listenPort ||
      olds.gatewayFilter !== news.gatewayFilter ||
      !this.clientHealthy(olds);
    return Promise.resolve({ changes: changed });
  },

  update(_id, olds, news) {
    return Promise.resolve({ outs: this.clientUp({ ...news, group: olds.group }) });
  },

  read(id, props) {
    // An unhealthy client is kept (its address claim and key stay valid): the next diff sees
    // it and the update heals it in place, rather than a re-create with a new address.
    return Promise.resolve({ id, props: props as LocalWireguardClientOutputs });
  },

  delete(_id, props) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const fs = require("node:fs") as typeof import("node:fs");
    this.lock(props.gatewayDir, () => {
      this.inNs(props.dataNetns, ["wg", "set", props.gatewayIfname, "peer", props.publicKey, "remove"], {
        allowFail: true,
      });
      this.stop(`${props.gatewayDir}/${props.netns}.pid`);
      fs.rmSync(`/var/run/wireguard/${props.ifname}.sock`, { force: true });
      // The namespace is this client's alone: whatever still runs there (a forwarder whose pid
      // file was lost) goes with it rather than outliving it unreachable.
      for (const pid of this.sh(["ip", "netns", "pids", props.netns], { allowFail: true }).split("\n")) {
        try {
          if (Number(pid) > 0) process.kill(Number(pid), "SIGKILL");
        } catch {
          // gone meanwhile
        }
      }
      // Deleting the namespace deletes the link, both ends.
      this.sh(["ip", "netns", "del", props.netns], { allowFail: true });
      this.inNs(props.dataNetns, ["ip", "link", "del", props.linkIfname], { allowFail: true });
      this.release(props.gatewayDir, "addresses", props.group);
      this.release(props.gatewayDir, "links", props.group);
      fs.rmSync(`${props.gatewayDir}/${props.netns}.log`, { force: true });
      this.gatewayDown(props);
    });
    return Promise.resolve();
  },
};

export type LocalWireguardClientArgs = {
  [K in keyof LocalWireguardClientInputs]: pulumi.Input<LocalWireguardClientInputs[K]>;
};

/** One group's client end of the local tunnel (and, shared, the gateway). */
export class LocalWireguardClient extends pulumi.dynamic.Resource {
  declare public readonly tunnelAddress: pulumi.Output<string>;
  declare public readonly gatewayPublicKey: pulumi.Output<string>;
  declare public readonly endpoint: pulumi.Output<string>;
  declare public readonly netns: pulumi.Output<string>;
  declare public readonly ifname: pulumi.Output<string>;

  constructor(name: string, args: LocalWireguardClientArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      localWireguardClientProvider,
      name,
      {
        ...args,
        privateKey: pulumi.secret(args.privateKey),
        tunnelAddress: undefined,
        gatewayPublicKey: undefined,
        endpoint: undefined,
      },
      { ...opts, additionalSecretOutputs: ["privateKey"] },
      "klutch",
      "LocalWireguardClient",
    );
  }
}

// ---------------------------------------------------------------------------------------

export interface LocalAllowedHostsInputs {
  dataNetns: string;
  gatewayIfname: string;
  nftTable: string;
  netns: string;
  ifname: string;
  gatewayPublicKey: string;
  /** The client's AllowedIPs for the gateway peer and its routes into the tunnel. */
  allowedIps: string[];
  /** "source . host . port" elements of the gateway filter's `flows` set. */
  flows: string[];
  /** "host . port" elements of its `services` set. */
  services: string[];
}

type HostsHelpers = Commands & {
  setElements(ns: string, table: string, set: string): string[];
  sync(olds: LocalAllowedHostsInputs | undefined, news: LocalAllowedHostsInputs): void;
  inPlace(o: LocalAllowedHostsInputs): boolean;
};
type HostsProvider = pulumi.dynamic.ResourceProvider<LocalAllowedHostsInputs, LocalAllowedHostsInputs> &
  HostsHelpers;

export const localAllowedHostsProvider: HostsProvider & {
  diff: NonNullable<HostsProvider["diff"]>;
  update: NonNullable<HostsProvider["update"]>;
  delete: NonNullable<HostsProvider["delete"]>;
} = {
  ...commands,

  setElements(ns, table, set) {
    const out = this.inNs(ns, ["nft", "-j", "list", "set", "inet", table, set], {
      allowFail: true,
    });
    if (!out) return [];
    type Elem = string | number | { concat: (string | number)[] };
    const parsed = JSON.parse(out) as { nftables: { set?: { elem?: Elem[] } }[] };
    const elems = parsed.nftables.find((x) => x.set)?.set?.elem ?? [];
    return elems.map((e) => (typeof e === "object" ? e.concat.join(" . ") : String(e)));
  },

  sync(olds, news) {
    const ns = news.netns;
    const gone = (olds?.allowedIps ?? []).filter((a) => !news.allowedIps.includes(a));
    // `wg set … allowed-ips` replaces the peer's list in place: no handshake, no new key.
    this.inNs(ns, [
      "wg",
      "set",
      news.ifname,
      "peer",
      news.gatewayPublicKey,
      "allowed-ips",
      news.allowedIps.join(","),
    ]);
    for (const a of news.allowedIps) this.inNs(ns, ["ip", "route", "replace", a, "dev", news.ifname]);
    for (const a of gone) this.inNs(ns, ["ip", "route", "del", a, "dev", news.ifname], { allowFail: true });
    // The gateway's flows of this client, in one transaction: added ones and removed ones
    // switch together, and the other clients' elements are never touched.
    const present = new Set(this.setElements(news.dataNetns, news.nftTable, "flows"));
    const lines: string[] = [];
    for (const f of news.flows)
      if (!present.has(f)) lines.push(`add element inet ${news.nftTable} flows { ${f} }`);
    for (const f of olds?.flows ?? [])
      if (!news.flows.includes(f) && present.has(f))
        lines.push(`delete element inet ${news.nftTable} flows { ${f} }`);
    // Services only keep the underlay away from served ports; other groups may serve the
    // same host:port, so they are added, never removed here.
    const services = new Set(this.setElements(news.dataNetns, news.nftTable, "services"));
    for (const s of news.services)
      if (!services.has(s)) lines.push(`add element inet ${news.nftTable} services { ${s} }`);
    if (lines.length > 0) this.inNs(news.dataNetns, ["nft", "-f", "-"], { input: `${lines.join("\n")}\n` });
  },

  inPlace(o) {
    const flows = new Set(this.setElements(o.dataNetns, o.nftTable, "flows"));
    if (!o.flows.every((f) => flows.has(f))) return false;
    const current = this.inNs(o.netns, ["wg", "show", o.ifname, "allowed-ips"], {
      allowFail: true,
    });
    const list = (current.split("\t")[1] ?? "").trim().split(/\s+/);
    return o.allowedIps.every((a) => list.includes(a)) && list.length === o.allowedIps.length;
  },

  create(inputs) {
    this.sync(undefined, inputs);
    return Promise.resolve({ id: `${inputs.netns}-allowed-hosts`, outs: inputs });
  },

  diff(_id, olds, news) {
    if (olds.netns !== news.netns || olds.dataNetns !== news.dataNetns)
      return Promise.resolve({ changes: true, replaces: ["netns"], deleteBeforeReplace: true });
    const same = JSON.stringify(olds) === JSON.stringify(news);
    // A restarted gateway or client lost the elements and AllowedIPs: put them back.
    return Promise.resolve({ changes: !same || !this.inPlace(olds) });
  },

  update(_id, olds, news) {
    this.sync(olds, news);
    return Promise.resolve({ outs: news });
  },

  delete(_id, props) {
    const present = new Set(this.setElements(props.dataNetns, props.nftTable, "flows"));
    const lines = props.flows
      .filter((f) => present.has(f))
      .map((f) => `delete element inet ${props.nftTable} flows { ${f} }`);
    if (lines.length > 0) this.inNs(props.dataNetns, ["nft", "-f", "-"], { input: `${lines.join("\n")}\n` });
    return Promise.resolve();
  },
};

export type LocalAllowedHostsArgs = {
  [K in keyof LocalAllowedHostsInputs]: pulumi.Input<LocalAllowedHostsInputs[K]>;
};

/** The data-service hosts one client may reach: its AllowedIPs, routes and gateway flows. */
export class LocalWireguardAllowedHosts extends pulumi.dynamic.Resource {
  constructor(name: string, args: LocalAllowedHostsArgs, opts?: pulumi.CustomResourceOptions) {
    super(localAllowedHostsProvider, name, args, opts, "klutch", "LocalWireguardAllowedHosts");
  }
}

// ---------------------------------------------------------------------------------------

export interface LocalTcpForwarderInputs {
  /** The connection (its path id): names the pid file, so two resources never share one. */
  name: string;
  /** Directory of the pid and log files. */
  dir: string;
  netns: string;
  listenAddress: string;
  listenPort: number;
  host: string;
  port: number;
}

/**
 * What a forwarder's state says: its inputs, and `failure` while it does not listen. A failed
 * forwarder is state, not an error: an error would fail the group's whole `up`, and with it
 * every other connection of the app cluster (the bridge reports `failure` on this path alone).
 */
export interface LocalTcpForwarderOutputs extends LocalTcpForwarderInputs {
  /** Why the forwarder does not listen, and what to change; absent while it works. */
  failure?: string;
}

type ForwarderHelpers = {
  /** Starts the forwarder; its failure, if any, in the state rather than thrown. */
  realise(i: LocalTcpForwarderInputs): LocalTcpForwarderOutputs;
  strays(i: LocalTcpForwarderInputs): number[];
  alive(pidFile: string): number | undefined;
  listening(pid: number, port: number): boolean;
  start(i: LocalTcpForwarderInputs): void;
  stopPid(pidFile: string): void;
  pidFile(i: LocalTcpForwarderInputs): string;
};
type ForwarderProvider = pulumi.dynamic.ResourceProvider<LocalTcpForwarderInputs, LocalTcpForwarderOutputs> &
  ForwarderHelpers;

/** How long a forwarder's socat may take to listen before the start counts as failed. */
const FORWARDER_START_TIMEOUT_MS = 20_000;

export const localTcpForwarderProvider: ForwarderProvider & {
  diff: NonNullable<ForwarderProvider["diff"]>;
  update: NonNullable<ForwarderProvider["update"]>;
  read: NonNullable<ForwarderProvider["read"]>;
  delete: NonNullable<ForwarderProvider["delete"]>;
} = {
  pidFile(i) {
    return `${i.dir}/${i.netns}-${i.name}.pid`;
  },

  realise(i) {
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
      this.start(inputs);
      return inputs;
    } catch (e) {
      return { ...inputs, failure: (e as Error).message };
    }
  },

  strays(i) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { spawnSync } = require("node:child_process") as typeof import("node:child_process");
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const fs = require("node:fs") as typeof import("node:fs");
    // The forwarders of this listener in the client's namespace, whatever the pid file says
    // (a pid file lost to a crash must not leave a process holding the port): the namespace
    // is this project's, and the listen argument names the connection's port.
    const r = spawnSync("ip", ["netns", "pids", i.netns], { encoding: "utf8" });
    const mine = `TCP-LISTEN:${i.listenPort},bind=${i.listenAddress},`;
    return (r.stdout ?? "")
      .split("\n")
      .map(Number)
      .filter((pid) => {
        try {
          const argv = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
          return pid > 0 && argv[0]?.endsWith("socat") === true && argv.some((a) => a.startsWith(mine));
        } catch {
          return false;
        }
      });
  },

  alive(pidFile) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const fs = require("node:fs") as typeof import("node:fs");
    try {
      const pid = Number(fs.readFileSync(pidFile, "utf8").trim());
      if (!Number.isInteger(pid) || pid <= 0) return undefined;
      process.kill(pid, 0);
      if (!fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("socat")) return undefined;
      return pid;
    } catch {
      return undefined;
    }
  },

  listening(pid, port) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const fs = require("node:fs") as typeof import("node:fs");
    // /proc/<pid>/net/tcp is the table of the process's own network namespace. The listening
    // socket must be this process's own (its inode among /proc/<pid>/fd): another process of the
    // namespace that holds the port listens there too, and the forwarder, refused the port, exits.
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
  },

  start(i) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const fs = require("node:fs") as typeof import("node:fs");
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { spawn } = require("node:child_process") as typeof import("node:child_process");
    fs.mkdirSync(i.dir, { recursive: true, mode: 0o700 });
    const pidFile = this.pidFile(i);
    this.stopPid(pidFile);
    for (const pid of this.strays(i)) process.kill(pid, "SIGKILL");
    const log = fs.openSync(`${i.dir}/${i.netns}-${i.name}.log`, "a", 0o600);
    // socat, as in the client pod (render-k8s.ts): one process per connection, a child per session.
    const child = spawn(
      "ip",
      [
        "netns",
        "exec",
        i.netns,
        "socat",
        `TCP-LISTEN:${i.listenPort},bind=${i.listenAddress},fork,reuseaddr`,
        `TCP:${i.host}:${i.port},connect-timeout=5`,
      ],
      { detached: true, stdio: ["ignore", log, log], env: { PATH: process.env.PATH ?? "/usr/bin:/bin" } },
    );
    fs.closeSync(log);
    child.unref();
    if (!child.pid)
      throw new Error(`could not start the forwarder ${i.listenAddress}:${i.listenPort} in ${i.netns}`);
    fs.writeFileSync(pidFile, `${child.pid}\n`);
    const pid = child.pid;
    // socat either listens or exits at once; a slow start only means a busy host, so the
    // deadline is generous and, when it passes with socat still alive, says so rather than
    // diagnosing a failure that has not happened.
    const deadline = Date.now() + FORWARDER_START_TIMEOUT_MS;
    while (!this.listening(pid, i.listenPort)) {
      const exited = !this.alive(pidFile);
      if (exited || Date.now() > deadline) {
        const logFile = `${i.dir}/${i.netns}-${i.name}.log`;
        const said = fs.readFileSync(logFile, "utf8").trim().split("\n").pop() ?? "";
        this.stopPid(pidFile);
        const where = `the forwarder ${i.listenAddress}:${i.listenPort} in ${i.netns}`;
        if (!exited)
          throw new Error(
            `${where} did not start listening within ${FORWARDER_START_TIMEOUT_MS / 1000} s (the host is busy; see ${logFile}). The bridge tries again on every reconcile.`,
          );
        const fix = /Address already in use/.test(said)
          ? `another process in network namespace ${i.netns} holds port ${i.listenPort}: stop it, or give the connection another port`
          : `see ${logFile}`;
        throw new Error(
          `${where} does not listen (${said.replace(/^\S+ \S+ socat\[\d+\] /, "") || "no output"}); ${fix}. The bridge tries again on every reconcile.`,
        );
      }
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    }
  },

  stopPid(pidFile) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const fs = require("node:fs") as typeof import("node:fs");
    const pid = this.alive(pidFile);
    if (pid) {
      // The whole process group: socat's per-session children go with it.
      try {
        process.kill(-pid, "SIGTERM");
      } catch {
        process.kill(pid, "SIGTERM");
      }
    }
    fs.rmSync(pidFile, { force: true });
  },

  create(inputs) {
    return Promise.resolve({ id: this.pidFile(inputs), outs: this.realise(inputs) });
  },

  diff(_id, olds, news) {
    if (
      olds.netns !== news.netns ||
      olds.listenPort !== news.listenPort ||
      olds.dir !== news.dir ||
      olds.name !== news.name
    )
      return Promise.resolve({ changes: true, replaces: ["listenPort"], deleteBeforeReplace: true });
    const pid = this.alive(this.pidFile(olds));
    // A failed forwarder is tried again on every reconcile: what blocked it may be gone.
    const dead = pid === undefined || !this.listening(pid, olds.listenPort) || olds.failure !== undefined;
    return Promise.resolve({ changes: dead || olds.host !== news.host || olds.port !== news.port });
  },

  update(_id, _olds, news) {
    return Promise.resolve({ outs: this.realise(news) });
  },

  read(id, props) {
    // A failed one stays (its failure is what the path reports); a dead one is gone.
    if (props?.failure !== undefined) return Promise.resolve({ id, props });
    if (!props || this.alive(this.pidFile(props)) === undefined)
      return Promise.resolve({ id: "", props: {} as LocalTcpForwarderOutputs });
    return Promise.resolve({ id, props });
  },

  delete(_id, props) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const fs = require("node:fs") as typeof import("node:fs");
    this.stopPid(this.pidFile(props));
    // A forwarder of this connection that no pid file names (lost to a crash) goes too; one
    // that another resource's pid file names (a new connection on the same port) stays.
    const recorded = new Set(
      fs
        .readdirSync(props.dir)
        .filter((f) => f.endsWith(".pid"))
        .map((f) => Number(fs.readFileSync(`${props.dir}/${f}`, "utf8").trim())),
    );
    for (const pid of this.strays(props)) {
      if (recorded.has(pid)) continue;
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone meanwhile
      }
    }
    fs.rmSync(`${props.dir}/${props.netns}-${props.name}.log`, { force: true });
    return Promise.resolve();
  },
};

export type LocalTcpForwarderArgs = {
  [K in keyof LocalTcpForwarderInputs]: pulumi.Input<LocalTcpForwarderInputs[K]>;
};

/** One connection's forwarder in the client namespace: what hostForConsumer:port names. */
export class LocalTcpForwarder extends pulumi.dynamic.Resource {
  /** Why it does not listen, and what to change; undefined while it works. */
  declare public readonly failure: pulumi.Output<string | undefined>;

  constructor(name: string, args: LocalTcpForwarderArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      localTcpForwarderProvider,
      name,
      { ...args, failure: undefined },
      opts,
      "klutch",
      "LocalTcpForwarder",
    );
  }
}
