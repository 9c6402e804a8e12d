/**
 * WireGuard path benchmark (not a mocha test):
 *
 *   npx ts-node --transpile-only test/bench/wireguard.ts
 *
 * Same lab as the data-plane test (wireguard-go in network namespaces, configs and filter
 * rendered by the project). In one run it measures, from appA to ds:
 *   - throughput: a bounded TCP bulk transfer (fixed duration, node sender and sink),
 *   - connection latency: median and p95 of N fresh TCP connects,
 * once through the tunnel (to the data-service host, via wireguard-go and the gateway
 * filter) and once over the direct veth (to the gateway's underlay address), interleaved so
 * background load hits both alike. Bounded in time and count; cleans up on every exit.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { DB_HOST, GATEWAY_UNDERLAY, WireguardLab, connectionA } from "../dataplane/wireguard-lab";

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

async function main(): Promise<void> {
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

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
