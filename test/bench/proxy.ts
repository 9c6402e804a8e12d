/**
 * Benchmark of the default network path: pgbench TPS and connection set-up latency through
 * HAProxy (configured by our renderer and CPU profiles) versus straight to PostgreSQL, in
 * one run, on 127.0.0.1 only. Run with:
 *
 *   npm run bench            (or: bash host/scripts/node.sh ts test/bench/proxy.ts)
 *
 * It measures each CPU topology with its own direct baseline, alternating direct and proxy
 * rounds so drift on this noisy machine hits both alike:
 *
 *   dedicated  the proxy on a CPU of its own, client and PostgreSQL on the others, HAProxy
 *              as TcpProxy renders it with `dedicatedCpus: 1` (busy polling). This is the
 *              deployed shape (the proxy is its own pod) and the one the goals apply to.
 *   sleeping   the same CPUs, HAProxy with the shared-CPU poller: what busy polling buys.
 *   shared     client, PostgreSQL and HAProxy on every CPU: on a small, saturated host the
 *              proxy's CPU time is taken from the other two, and the ratio shows that cost.
 *
 * The dedicated topology runs 4 and 16 clients: with 4, one CPU runs client and database with
 * hardly any scheduling (the kindest direct baseline), and the proxy's cross-CPU wake-ups
 * land on that saturated CPU; with 16, as from a connection pool, the run queue is never
 * empty and those wake-ups batch.
 *
 * BENCH_SECONDS (default 10), BENCH_ROUNDS (default 3), BENCH_CONNECTIONS (default 200),
 * BENCH_CLIENTS (e.g. 4,16) and BENCH_TOPOLOGIES (default dedicated,sleeping,shared) shorten
 * or select.
 * Goals: proxy TPS >= 0.9 of direct, <= 1 ms added median set-up.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { HaproxyOptions } from "../../network/proxy/model/haproxy-config";
import { haproxyOptionsFor } from "../../network/proxy/model/profile";
import { ProxyConnection } from "../../network/proxy/model/types";
import {
  Haproxy,
  Postgres,
  cpuSeconds,
  freePort,
  freePortRange,
  pgHandshakeMs,
  pgbenchTps,
  pinProcess,
  renderLocal,
  run,
} from "../helpers/pg-haproxy";
import { portsFor } from "../helpers/ports";

/** This file's own host ports (test/helpers/ports.ts). */
const hostPorts = portsFor(__filename);

const GOAL_TPS_RATIO = 0.9;
const GOAL_ADDED_SETUP_MS = 1;

interface Topology {
  name: string;
  what: string;
  /** taskset CPU list of pgbench, PostgreSQL and this process; undefined = all. */
  clientCpus?: string;
  proxyCpus?: string;
  haproxy: HaproxyOptions;
  /** The goals are checked on this one; the others explain it. */
  goal: boolean;
  /** pgbench client counts to run (each a TPC-B and a select-only workload). */
  clients: number[];
}

interface Workload {
  name: string;
  args: string[];
}

interface TopologyResult {
  topology: Topology;
  /** proxyCpuUs: HAProxy's CPU per proxied transaction (NaN with busy polling, which burns its CPU regardless). */
  tps: { workload: string; direct: number; proxy: number; proxyCpuUs: number }[];
  setup: Record<"direct" | "proxy", number[]>;
}

function topologies(cpus: number): Topology[] {
  const all = `0-${cpus - 1}`;
  const client = cpus > 2 ? `0-${cpus - 2}` : "0";
  const proxy = String(cpus - 1);
  const list: Topology[] = [
    {
      name: "dedicated",
      what: `proxy on CPU ${proxy} with busy polling (TcpProxy dedicatedCpus: 1); client and PostgreSQL on CPU ${client}`,
      clientCpus: client,
      proxyCpus: proxy,
      haproxy: haproxyOptionsFor(1),
      goal: true,
      // Why 4 and 16: see the header.
      clients: [4, 16],
    },
    {
      name: "sleeping",
      what: `proxy on CPU ${proxy}, sleeping in the poller; client and PostgreSQL on CPU ${client}`,
      clientCpus: client,
      proxyCpus: proxy,
      haproxy: { nbthread: 1 },
      goal: false,
      clients: [4],
    },
    {
      name: "shared",
      what: `client, PostgreSQL and the proxy (1 thread) all on CPUs ${all}`,
      haproxy: { nbthread: 1 },
      goal: false,
      clients: [4],
    },
  ];
  // With one CPU there is nothing to dedicate.
  const usable = cpus >= 2 ? list : list.filter((t) => t.proxyCpus === undefined);
  const wanted = (process.env.BENCH_TOPOLOGIES ?? "").split(",").filter(Boolean);
  const unknown = wanted.filter((w) => !list.some((t) => t.name === w));
  if (unknown.length > 0)
    throw new Error(
      `BENCH_TOPOLOGIES: unknown ${unknown.join(", ")}; use ${list.map((t) => t.name).join(",")}`,
    );
  return wanted.length > 0 ? usable.filter((t) => wanted.includes(t.name)) : usable;
}

/** BENCH_CLIENTS (e.g. "4,16") overrides every topology's client counts. */
function clientCounts(topology: Topology): number[] {
  const wanted = (process.env.BENCH_CLIENTS ?? "").split(",").filter(Boolean).map(Number);
  if (wanted.some((n) => !Number.isInteger(n) || n < 1))
    throw new Error(`BENCH_CLIENTS: "${process.env.BENCH_CLIENTS}" is not a list of client counts like 4,16`);
  return wanted.length > 0 ? wanted : topology.clients;
}

/**
 * TPC-B-like (7 statements a transaction) and select-only (-S), the worst case for a proxy
 * because the database does almost nothing per round trip; per client count.
 */
function workloadsFor(clients: number[], seconds: number): Workload[] {
  return clients.flatMap((c) => {
    const common = ["-c", String(c), "-j", "2", "-T", String(seconds), "-n"];
    return [
      { name: `pgbench TPC-B, ${c} clients`, args: common },
      { name: `pgbench -S, ${c} clients`, args: ["-S", ...common] },
    ];
  });
}

function quantile(xs: number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i] as number;
}

const median = (xs: number[]) => quantile(xs, 0.5);
const signed = (n: number) => `${n >= 0 ? "+" : ""}${n.toFixed(3)}`;

function pgbenchTransactions(output: string): number {
  const m = /number of transactions actually processed: (\d+)/.exec(output);
  return m ? Number(m[1]) : 0;
}

async function pgbench(port: number, args: string[], cpus: string | undefined, seconds: number) {
  const argv = ["-h", "127.0.0.1", "-p", String(port), ...args];
  const res = await (cpus
    ? run("taskset", ["-c", cpus, "pgbench", ...argv], { timeoutMs: (seconds + 30) * 1000 })
    : run("pgbench", argv, { timeoutMs: (seconds + 30) * 1000 }));
  if (res.code !== 0) throw new Error(`pgbench ${argv.join(" ")} failed: ${res.stderr}`);
  return { tps: pgbenchTps(res.stdout), transactions: pgbenchTransactions(res.stdout) };
}

async function measure(
  topology: Topology,
  pg: Postgres,
  work: string,
  settings: { seconds: number; rounds: number; samples: number; allCpus: string },
): Promise<TopologyResult> {
  console.log(`\n== ${topology.name}: ${topology.what}`);
  pg.pin(topology.clientCpus ?? settings.allCpus);
  pinProcess(process.pid, topology.clientCpus ?? settings.allCpus);
  const statsPort = await freePort();
  const healthPort = await freePort();
  const range = await freePortRange(4, hostPorts);
  const connection: ProxyConnection = {
    id: "bench/db",
    instanceHost: "127.0.0.1",
    port: pg.port,
    enhancements: [{ InstanceType: "PostgreSQL" }],
  };
  const { config, assignments } = renderLocal([connection], range, {
    ...topology.haproxy,
    statsPort,
    healthPort,
    pgsqlCheckUser: "postgres",
  });
  const proxyPort = assignments["bench/db"] as number;
  const proxy = await Haproxy.start(config, work, [proxyPort, statsPort, healthPort], undefined, {
    cpus: topology.proxyCpus,
  });
  try {
    const targets = { direct: pg.port, proxy: proxyPort };
    const tps: TopologyResult["tps"] = [];
    for (const workload of workloadsFor(clientCounts(topology), settings.seconds)) {
      let proxyCpu = 0;
      let proxyTransactions = 0;
      const seen: Record<"direct" | "proxy", number[]> = { direct: [], proxy: [] };
      console.log(
        `pgbench ${workload.args.join(" ")}: ${settings.rounds} rounds, direct and proxy alternating`,
      );
      for (let r = 1; r <= settings.rounds; r++) {
        // Alternate which goes first, so a drifting machine does not favour one side.
        const order = r % 2 === 1 ? (["direct", "proxy"] as const) : (["proxy", "direct"] as const);
        for (const kind of order) {
          const cpuBefore = cpuSeconds(proxy.pid);
          const result = await pgbench(targets[kind], workload.args, topology.clientCpus, settings.seconds);
          seen[kind].push(result.tps);
          if (kind === "proxy") {
            proxyCpu += cpuSeconds(proxy.pid) - cpuBefore;
            proxyTransactions += result.transactions;
          }
          console.log(`  round ${r} ${kind.padEnd(6)} ${result.tps.toFixed(0)} tps`);
        }
      }
      tps.push({
        workload: workload.name,
        direct: median(seen.direct),
        proxy: median(seen.proxy),
        // Busy polling burns its CPU whether or not it proxies, so a per-transaction figure means nothing.
        proxyCpuUs: topology.haproxy.busyPolling ? NaN : (proxyCpu / Math.max(1, proxyTransactions)) * 1e6,
      });
    }
    console.log(`connection set-up: ${settings.samples} fresh connections each, interleaved`);
    const setup: TopologyResult["setup"] = { direct: [], proxy: [] };
    for (let i = 0; i < settings.samples; i++) {
      for (const kind of i % 2 === 0 ? (["direct", "proxy"] as const) : (["proxy", "direct"] as const)) {
        setup[kind].push(await pgHandshakeMs(targets[kind]));
      }
    }
    return { topology, tps, setup };
  } finally {
    await proxy.stop();
  }
}

function report(results: TopologyResult[]): void {
  const row = (cells: string[]) =>
    console.log(cells.map((c, i) => (i === 0 ? c.padEnd(40) : c.padStart(16))).join(""));
  for (const r of results) {
    console.log(`\n${r.topology.name}${r.topology.goal ? " (goals)" : ""}: ${r.topology.what}`);
    row(["", "direct", "proxy", "proxy/direct", "HAProxy µs/txn"]);
    for (const t of r.tps) {
      row([
        `${t.workload} TPS (median)`,
        t.direct.toFixed(0),
        t.proxy.toFixed(0),
        (t.proxy / t.direct).toFixed(3),
        Number.isFinite(t.proxyCpuUs) ? t.proxyCpuUs.toFixed(1) : "(polling)",
      ]);
    }
    const added = (q: number) => quantile(r.setup.proxy, q) - quantile(r.setup.direct, q);
    for (const [label, q] of [
      ["set-up median (ms)", 0.5],
      ["set-up p95 (ms)", 0.95],
    ] as const) {
      row([
        label,
        quantile(r.setup.direct, q).toFixed(3),
        quantile(r.setup.proxy, q).toFixed(3),
        signed(added(q)),
      ]);
    }
  }
  console.log("");
  for (const r of results) {
    const added = median(r.setup.proxy) - median(r.setup.direct);
    const verdicts = [
      ...r.tps.map((t) => ({
        text: `${t.workload} TPS ratio >= ${GOAL_TPS_RATIO}`,
        met: t.proxy / t.direct >= GOAL_TPS_RATIO,
        value: (t.proxy / t.direct).toFixed(3),
      })),
      {
        text: `added median set-up <= ${GOAL_ADDED_SETUP_MS} ms`,
        met: added <= GOAL_ADDED_SETUP_MS,
        value: `${signed(added)} ms`,
      },
    ];
    for (const v of verdicts) {
      const verdict = r.topology.goal ? (v.met ? "MET" : "MISSED") : v.met ? "within" : "outside";
      console.log(
        `${r.topology.goal ? "goal" : "info"} [${r.topology.name}] ${v.text}: ${verdict} (${v.value})`,
      );
    }
  }
}

async function main(): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 10);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const samples = Number(process.env.BENCH_CONNECTIONS ?? 200);
  const cpus = os.availableParallelism();
  const allCpus = `0-${cpus - 1}`;
  const chosen = topologies(cpus);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-bench-"));
  let pg: Postgres | undefined;
  const cleanup = async () => {
    await pg?.destroy();
    fs.rmSync(work, { recursive: true, force: true });
  };
  process.once("SIGINT", () => void cleanup().then(() => process.exit(130)));
  try {
    console.log(
      `PostgreSQL 15 and HAProxy on 127.0.0.1, ${cpus} CPUs, load ${os.loadavg()[0]?.toFixed(2)}; ` +
        `topologies ${chosen.map((t) => t.name).join(", ")}; ${rounds} x ${seconds} s per side and workload`,
    );
    pg = await Postgres.start();
    // Scale = the most clients: pgbench's own advice, so TPC-B measures the path, not row
    // locks on a few branches.
    const scale = Math.max(...chosen.flatMap(clientCounts));
    const init = await run(
      "pgbench",
      ["-h", "127.0.0.1", "-p", String(pg.port), "-i", "-s", String(scale), "-q"],
      { timeoutMs: 300000 },
    );
    if (init.code !== 0) throw new Error(`pgbench -i failed: ${init.stderr}`);
    const results: TopologyResult[] = [];
    for (const topology of chosen) {
      results.push(await measure(topology, pg, work, { seconds, rounds, samples, allCpus }));
    }
    pg.pin(allCpus);
    pinProcess(process.pid, allCpus);
    report(results);
  } finally {
    await cleanup();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
