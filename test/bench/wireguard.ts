/**
 * WireGuard path benchmark (not a mocha test):
 *
 *   bash host/scripts/node.sh ts test/bench/wireguard.ts
 *
 * Same lab as the data-plane test (wireguard-go in network namespaces, configs and filter
 * rendered by the project). In one run it measures, from appA to ds:
 *   - throughput: a bounded TCP bulk transfer (fixed duration, node sender and sink),
 *   - connection latency: median and p95 of N fresh TCP connects,
 * once through the tunnel (to the data-service host, via wireguard-go and the gateway
 * filter) and once over the direct veth (to the gateway's underlay address), interleaved so
 * background load hits both alike. Then, in the same run, PostgreSQL over the three paths a
 * consumer can take (direct, proxy, WireGuard as the bridge realises it): pgbench TPS and
 * connect latency as ratios (pathsBench). Bounded in time and count; cleans up on every exit.
 * BENCH_WIREGUARD=lab|paths runs one half; BENCH_SECONDS, BENCH_ROUNDS, BENCH_CLIENTS and
 * BENCH_CONNECTIONS shorten or lengthen the second.
 */
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  LOCAL_FORWARDER_ADDRESS,
  localClientSettings,
  localConnection,
  localGatewayNames,
  localGroupPlan,
  localNames,
} from "../../network/wireguard/model/local-plan";
import { localAllowedHostsProvider } from "../../network/wireguard/local/allowed-hosts-provider";
import { localWireguardClientProvider } from "../../network/wireguard/local/client-provider";
import { localTcpForwarderProvider } from "../../network/wireguard/local/forwarder-provider";
import { wireguardKeyProvider } from "../../network/wireguard/key-provider";
import { NFT_TABLE } from "../../network/wireguard/model/render-nftables";
import { DB_HOST, GATEWAY_UNDERLAY, WireguardLab, connectionA } from "../dataplane/wireguard-lab";
import { NetnsDataService, nsExec } from "../helpers/netns-data-service";
import { HAPROXY, pgbenchTps, renderLocal } from "../helpers/pg-haproxy";

const BULK_PORT = 5201;
const CONNECT_PORT = 5202;
const BULK_MS = 2000;
const BULK_RUNS = 3;
const CONNECTS_PER_BATCH = 100;
const CONNECT_BATCHES = 3;
const HARD_LIMIT_MS = 110000;

const SINK = `
const net = require("net");
net.createServer((s) => {
  let n = 0;
  s.on("data", (d) => (n += d.length));
  s.on("end", () => s.end(String(n)));
  s.on("error", () => {});
}).listen(Number(process.argv[2]), "0.0.0.0", () => console.log("listening"));
`;

const CLIENT = `
const net = require("net");
const [mode, host, port, param] = process.argv.slice(2);
if (mode === "bulk") {
  const chunk = Buffer.alloc(256 * 1024, 7);
  const s = net.connect(Number(port), host);
  let t0, stop = false, reply = "";
  const pump = () => {
    while (!stop) if (!s.write(chunk)) return s.once("drain", pump);
    s.end();
  };
  s.on("connect", () => { t0 = process.hrtime.bigint(); setTimeout(() => (stop = true), Number(param)); pump(); });
  s.on("data", (d) => (reply += d));
  s.on("end", () => {
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    console.log(JSON.stringify({ bytes: Number(reply), seconds }));
  });
  s.on("error", (e) => { console.error(e.message); process.exit(1); });
} else {
  const times = [];
  const one = (left) => {
    if (left === 0) return console.log(JSON.stringify({ times }));
    const t0 = process.hrtime.bigint();
    const s = net.connect(Number(port), host, () => {
      times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      s.destroy();
      setImmediate(() => one(left - 1));
    });
    s.setTimeout(3000, () => { console.error("connect timeout"); process.exit(1); });
    s.on("error", (e) => { console.error(e.message); process.exit(1); });
  };
  one(Number(param));
}
`;

interface PathResult {
  throughputs: number[];
  connects: number[];
}

function quantile(sorted: number[], q: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i] ?? NaN;
}

function median(values: number[]): number {
  return quantile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
}

async function labBench(): Promise<void> {
  const lab = new WireguardLab();
  const limit = setTimeout(() => {
    console.error(`benchmark exceeded ${HARD_LIMIT_MS / 1000} s; cleaning up`);
    void lab.cleanup().then(() => process.exit(2));
  }, HARD_LIMIT_MS);
  try {
    await lab.setupUnderlay();
    await lab.makeKeys();
    // Connections for the benchmark ports, so the gateway filter admits them through the tunnel.
    await lab.bringUp([connectionA(BULK_PORT, "bulk"), connectionA(CONNECT_PORT, "connect")]);
    const sink = path.join(lab.tmp, "sink.js");
    const client = path.join(lab.tmp, "client.js");
    fs.writeFileSync(sink, SINK);
    fs.writeFileSync(client, CLIENT);
    const server = lab.spawnIn("ds", ["node", sink, String(BULK_PORT)]);
    await new Promise((r) => server.stdout?.once("data", r));
    await lab.startTcpServer("0.0.0.0", CONNECT_PORT);

    const targets = { direct: GATEWAY_UNDERLAY["app-a"], tunnel: DB_HOST } as const;
    const results: Record<keyof typeof targets, PathResult> = {
      direct: { throughputs: [], connects: [] },
      tunnel: { throughputs: [], connects: [] },
    };
    const runClient = async (args: string[]) => {
      const r = await lab.exec(lab.ns.appA, ["node", client, ...args], { timeoutMs: 30000 });
      if (r.code !== 0) throw new Error(`client ${args.join(" ")} failed: ${r.stderr}`);
      return JSON.parse(r.stdout) as { bytes?: number; seconds?: number; times?: number[] };
    };

    // Warm-up: the first tunnel packet waits for a handshake, which is not what we measure.
    for (const host of Object.values(targets)) await runClient(["connect", host, String(CONNECT_PORT), "5"]);

    for (let i = 0; i < BULK_RUNS; i++) {
      for (const [name, host] of Object.entries(targets) as [keyof typeof targets, string][]) {
        const r = await runClient(["bulk", host, String(BULK_PORT), String(BULK_MS)]);
        results[name].throughputs.push((r.bytes ?? 0) / (r.seconds ?? 1) / 1e6);
      }
    }
    for (let i = 0; i < CONNECT_BATCHES; i++) {
      for (const [name, host] of Object.entries(targets) as [keyof typeof targets, string][]) {
        const r = await runClient(["connect", host, String(CONNECT_PORT), String(CONNECTS_PER_BATCH)]);
        results[name].connects.push(...(r.times ?? []));
      }
    }

    const rows = (Object.keys(targets) as (keyof typeof targets)[]).map((name) => {
      const sorted = [...results[name].connects].sort((a, b) => a - b);
      return {
        path: name,
        target: `${targets[name]}`,
        mbps: median(results[name].throughputs),
        runs: results[name].throughputs.map((t) => t.toFixed(0)).join("/"),
        p50: quantile(sorted, 0.5),
        p95: quantile(sorted, 0.95),
        n: sorted.length,
      };
    });
    const [direct, tunnel] = rows as [(typeof rows)[number], (typeof rows)[number]];
    console.log(
      `\nWireGuard path benchmark (appA → ds), ${BULK_RUNS}×${BULK_MS / 1000} s bulk, ${CONNECT_BATCHES * CONNECTS_PER_BATCH} connects per path`,
    );
    console.log("path    target           throughput MB/s (runs)     connect p50 ms  p95 ms  n");
    for (const r of rows) {
      console.log(
        `${r.path.padEnd(7)} ${r.target.padEnd(16)} ${r.mbps.toFixed(1).padStart(8)} (${r.runs})`.padEnd(51) +
          `${r.p50.toFixed(3).padStart(10)}  ${r.p95.toFixed(3).padStart(6)}  ${r.n}`,
      );
    }
    console.log(
      `ratio tunnel/direct: throughput ${(tunnel.mbps / direct.mbps).toFixed(3)}, ` +
        `connect p50 ${(tunnel.p50 / direct.p50).toFixed(2)}x, p95 ${(tunnel.p95 / direct.p95).toFixed(2)}x`,
    );
  } finally {
    clearTimeout(limit);
    await lab.cleanup();
  }
}

/** A PostgreSQL startup handshake (trust auth) N times from inside a namespace; prints the ms of each. */
const HANDSHAKES = `
const net = require("net");
const [host, port, n] = process.argv.slice(2);
const params = Buffer.from("user\\0postgres\\0database\\0postgres\\0\\0", "latin1");
const startup = Buffer.alloc(8 + params.length);
startup.writeInt32BE(startup.length, 0);
startup.writeInt32BE(196608, 4);
params.copy(startup, 8);
const times = [];
const one = (left) => {
  if (left === 0) return console.log(JSON.stringify({ times }));
  const t0 = process.hrtime.bigint();
  const s = net.connect({ host, port: Number(port), noDelay: true });
  let buf = Buffer.alloc(0);
  s.setTimeout(5000, () => { console.error("timeout"); process.exit(1); });
  s.on("error", (e) => { console.error(e.message); process.exit(1); });
  s.on("connect", () => s.write(startup));
  s.on("data", (d) => {
    buf = Buffer.concat([buf, d]);
    while (buf.length >= 5) {
      const len = buf.readInt32BE(1);
      if (buf.length < 1 + len) break;
      if (buf[0] === 0x45) { console.error(buf.subarray(5, 1 + len).toString()); process.exit(1); }
      if (buf[0] === 0x5a) {
        times.push(Number(process.hrtime.bigint() - t0) / 1e6);
        s.end(Buffer.from([0x58, 0, 0, 0, 4]));
        return setImmediate(() => one(left - 1));
      }
      buf = buf.subarray(1 + len);
    }
  });
};
one(Number(n));
`;

/**
 * The three paths a consumer's PostgreSQL session can take, in one run against one
 * PostgreSQL 15 in a data-service namespace:
 *   direct     pgbench in the data-service namespace to the instance itself;
 *   proxy      through HAProxy as the proxy implementation renders it (same namespace);
 *   wireguard  from an app-side namespace through the forwarder, wireguard-go and the
 *              gateway filter, set up by the same dynamic providers the bridge runs.
 * Rounds alternate the paths so drift hits all alike; figures are medians of the rounds,
 * reported as ratios to direct (and WireGuard to proxy).
 */
async function pathsBench(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const clients = Number(process.env.BENCH_CLIENTS ?? 4);
  const handshakes = Number(process.env.BENCH_CONNECTIONS ?? 100);
  const ds = new NetnsDataService([DB_HOST], 5432, "0.0.0.0/0");
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-wg-bench-"));
  const names = localNames("bench/wireguard");
  let haproxy: ChildProcess | undefined;
  const undo: (() => Promise<unknown>)[] = [];
  const limit = setTimeout(
    () => {
      console.error("paths benchmark exceeded its time limit; cleaning up");
      haproxy?.kill("SIGKILL");
      void Promise.allSettled(undo.reverse().map((u) => u())).then(() => {
        ds.destroy();
        process.exit(2);
      });
    },
    (rounds * 3 * (seconds + 8) + 120) * 1000,
  );
  try {
    await ds.start();
    // HAProxy, rendered as the proxy implementation renders it, inside the data-service namespace.
    const { config, assignments } = renderLocal(
      [{ id: "pg", instanceHost: DB_HOST, port: 5432 }],
      { from: 30000, to: 30009 },
      { statsPort: 30010, healthPort: 30011, nbthread: 1 },
    );
    const cfg = path.join(work, "haproxy.cfg");
    fs.writeFileSync(cfg, config);
    haproxy = spawn("ip", ["netns", "exec", ds.ns, HAPROXY, "-f", cfg, "-db"], { stdio: "ignore" });
    const proxyPort = Object.values(assignments)[0] as number;

    // The WireGuard path exactly as the bridge's local target builds it.
    const key = (await wireguardKeyProvider.create({ rotation: "bench" })).outs!;
    const gateway = localGatewayNames(work, ds.ns);
    const plan = localGroupPlan(names.appCluster, [localConnection("pg", names.appCluster, DB_HOST, 5432)]);
    const clientInputs = localClientSettings({
      group: "bench/wireguard",
      gateway,
      dataNetns: ds.ns,
      gatewayAddress: plan.gatewayAddress,
      key,
    });
    const client = (await localWireguardClientProvider.create(clientInputs)).outs!;
    undo.push(() => localWireguardClientProvider.delete("bench", client));
    const live = localGroupPlan(
      names.appCluster,
      [localConnection("pg", names.appCluster, DB_HOST, 5432)],
      client.tunnelAddress,
    );
    const hosts = {
      dataNetns: ds.ns,
      gatewayIfname: gateway.ifname,
      nftTable: NFT_TABLE,
      netns: names.netns,
      ifname: names.ifname,
      gatewayPublicKey: client.gatewayPublicKey,
      allowedIps: live.allowedIps,
      flows: live.flows,
      services: live.services,
    };
    await localAllowedHostsProvider.create(hosts);
    undo.push(() => localAllowedHostsProvider.delete("bench", hosts));
    const fwd = live.forwarders[0]!;
    const forwarder = {
      name: "pg",
      dir: path.join(gateway.dir, "forwarders"),
      netns: names.netns,
      listenAddress: LOCAL_FORWARDER_ADDRESS,
      listenPort: fwd.listenPort,
      host: fwd.host,
      port: fwd.port,
    };
    await localTcpForwarderProvider.create(forwarder);
    undo.push(() => localTcpForwarderProvider.delete("bench", forwarder));

    const paths = {
      direct: { ns: ds.ns, host: DB_HOST, port: 5432 },
      proxy: { ns: ds.ns, host: "127.0.0.1", port: proxyPort },
      wireguard: { ns: names.netns, host: LOCAL_FORWARDER_ADDRESS, port: fwd.listenPort },
    } as const;
    type PathName = keyof typeof paths;
    const script = path.join(work, "handshakes.js");
    fs.writeFileSync(script, HANDSHAKES);
    const init = await ds.exec(
      ["pgbench", "-h", DB_HOST, "-U", "postgres", "-i", "-s", String(clients), "-q", "postgres"],
      120000,
    );
    if (init.code !== 0) throw new Error(`pgbench -i: ${init.stderr}`);
    // Warm-up: the tunnel's first packet waits for a handshake; HAProxy's first check.
    for (const p of Object.values(paths)) {
      const r = await nsExec(p.ns, [process.execPath, script, p.host, String(p.port), "5"], {
        timeoutMs: 30000,
      });
      if (r.code !== 0) throw new Error(`warm-up ${p.ns} ${p.host}:${p.port}: ${r.stderr}`);
    }
    const tps: Record<PathName, number[]> = { direct: [], proxy: [], wireguard: [] };
    const connect: Record<PathName, number[]> = { direct: [], proxy: [], wireguard: [] };
    for (let round = 0; round < rounds; round++) {
      for (const name of Object.keys(paths) as PathName[]) {
        const p = paths[name];
        const r = await nsExec(
          p.ns,
          [
            "pgbench",
            "-h",
            p.host,
            "-p",
            String(p.port),
            "-U",
            "postgres",
            "-S",
            "-n",
            "-c",
            String(clients),
            "-j",
            "2",
            "-T",
            String(seconds),
            "postgres",
          ],
          { timeoutMs: (seconds + 30) * 1000 },
        );
        if (r.code !== 0) throw new Error(`pgbench over ${name}: ${r.stderr}`);
        tps[name].push(pgbenchTps(r.stdout));
        const h = await nsExec(p.ns, [process.execPath, script, p.host, String(p.port), String(handshakes)], {
          timeoutMs: 60000,
        });
        if (h.code !== 0) throw new Error(`handshakes over ${name}: ${h.stderr}`);
        connect[name].push(...(JSON.parse(h.stdout) as { times: number[] }).times);
      }
    }
    const row = (name: PathName) => {
      const sorted = [...connect[name]].sort((a, b) => a - b);
      return { name, tps: median(tps[name]), p50: quantile(sorted, 0.5), p95: quantile(sorted, 0.95) };
    };
    const [direct, proxy, wg] = (["direct", "proxy", "wireguard"] as const).map(row) as [
      ReturnType<typeof row>,
      ReturnType<typeof row>,
      ReturnType<typeof row>,
    ];
    console.log(
      `\nPostgreSQL paths (one PostgreSQL 15, pgbench -S, ${clients} clients, ${rounds}×${seconds} s; ${rounds * handshakes} handshakes per path)`,
    );
    console.log("path       TPS (median; rounds)              connect p50 ms  p95 ms");
    for (const r of [direct, proxy, wg]) {
      console.log(
        `${r.name.padEnd(10)} ${r.tps.toFixed(0).padStart(7)} (${tps[r.name].map((t) => t.toFixed(0)).join("/")})`.padEnd(
          47,
        ) + `${r.p50.toFixed(3).padStart(8)}  ${r.p95.toFixed(3).padStart(6)}`,
      );
    }
    const ratio = (a: number, b: number) => (a / b).toFixed(2);
    console.log(
      `ratios: TPS wireguard/direct ${ratio(wg.tps, direct.tps)}, wireguard/proxy ${ratio(wg.tps, proxy.tps)}, proxy/direct ${ratio(proxy.tps, direct.tps)}`,
    );
    console.log(
      `        connect p50 wireguard/direct ${ratio(wg.p50, direct.p50)}x, wireguard/proxy ${ratio(wg.p50, proxy.p50)}x, proxy/direct ${ratio(proxy.p50, direct.p50)}x`,
    );
  } finally {
    clearTimeout(limit);
    haproxy?.kill("SIGKILL");
    for (const u of undo.reverse()) await u().catch((e: Error) => console.error(`cleanup: ${e.message}`));
    ds.destroy();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  if (process.env.BENCH_WIREGUARD !== "paths") await labBench();
  if (process.env.BENCH_WIREGUARD !== "lab") await pathsBench();
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
