/**
 * The data path's cost, measured the way an application pays it: pgbench from one consumer pod
 * to one PostgreSQL pod over several paths, in one run, alternating the paths each round so the
 * drift of this shared 2-core machine hits all of them alike (test/bench/data-paths.ts sets the
 * paths up). For every path it measures:
 *
 * - select-only (`-S`) and TPC-B (the default script) at each client count, on held connections
 *   (`-n`: no vacuum between runs);
 * - connect latency: the average latency of `-S -C -c 1`, a new connection with its TCP and
 *   PostgreSQL handshakes per transaction, minus nothing (direct pays the same handshakes);
 * - CPU per transaction, from the pods' cpuacct cgroups (client, the hop's pods, the server) and
 *   /proc/stat for the whole machine, so "other" is what no pod is charged for: softirq network
 *   processing, kube-proxy's rules, the kubelet. That says where the time goes, not only how much.
 *
 * Figures only, nothing asserted: a benchmark, never a timed test.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { pgbenchTps } from "./pg-haproxy";

export type Workload = "select" | "tpcb";

export interface BenchPath {
  name: string;
  host: string;
  port: number;
  /** cpuacct cgroup directories of the pods this path adds between client and server. */
  hopCgroups: () => string[];
  /** The hop's containers by name, for where the hop's CPU goes (cpuacct directories). */
  hopContainers?: () => Record<string, string[]>;
  /** Measure the connect time only (a path that differs from another only in how it is named). */
  connectOnly?: boolean;
}

export interface DataPathBench {
  /** Runs a command in the consumer pod (PGPASSWORD set there); resolves with stdout. */
  exec: (argv: string[]) => string;
  paths: BenchPath[];
  clientCgroups: () => string[];
  serverCgroups: () => string[];
  workloads: Workload[];
  clients: number[];
  seconds: number;
  rounds: number;
  log: (line: string) => void;
}

/** CPU in µs per transaction of each part of the path. */
export interface CpuPerTx {
  client: number;
  hop: number;
  server: number;
  /** Busy CPU of the whole machine that no measured pod is charged for. */
  other: number;
}

export interface Cell {
  tps: number;
  cpu: CpuPerTx;
}

export interface PathFigures {
  /** Keyed `${workload}/${clients}`. */
  cells: Record<string, Cell>;
  connectMs: number;
  /** µs per transaction of each hop container, over every cell of the path. */
  hopByContainer?: Record<string, number>;
}

export const cellKey = (w: Workload, c: number): string => `${w}/${c}`;

/** Nanoseconds of CPU the cgroups have used (cpuacct.usage, cgroup v1). */
export function cgroupCpuNs(dirs: readonly string[]): number {
  return dirs.reduce((sum, d) => sum + Number(fs.readFileSync(path.join(d, "cpuacct.usage"), "utf8")), 0);
}

/** Busy CPU of the machine in ns (every /proc/stat cpu field but idle and iowait). */
export function machineBusyNs(stat = fs.readFileSync("/proc/stat", "utf8")): number {
  const fields = (stat.split("\n")[0] ?? "").trim().split(/\s+/).slice(1).map(Number);
  const [user, nice, system, , , irq, softirq, steal] = fields;
  const hz = 100; // USER_HZ: 100 on every Linux this runs on
  return (
    (((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) * 1e9) / hz
  );
}

/** A container's cpuacct cgroup: kubelet's cgroupfs driver names it by its container ID under the pod's. */
export function containerCgroup(podDir: string, containerId: string): string {
  return path.join(podDir, containerId.replace(/^[a-z]+:\/\//, ""));
}

/** Where the cpuacct cgroup of a pod is on this host: kubelet names it pod<uid> under its root. */
export function podCgroup(uid: string, root = "/sys/fs/cgroup/cpuacct"): string {
  const want = `pod${uid}`;
  const walk = (dir: string, depth: number): string | undefined => {
    if (depth > 6) return undefined;
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (!e.isDirectory()) continue;
      const p = path.join(dir, e.name);
      if (e.name === want) return p;
      const found = walk(p, depth + 1);
      if (found) return found;
    }
    return undefined;
  };
  const found = walk(root, 0);
  if (!found) throw new Error(`no cpuacct cgroup named ${want} under ${root}`);
  return found;
}

function latencyMs(output: string): number {
  const m = /latency average = ([\d.]+) ms/.exec(output);
  if (!m) throw new Error(`no latency in pgbench output:\n${output}`);
  return Number(m[1]);
}

function transactions(output: string): number {
  const m = /number of transactions actually processed: (\d+)/.exec(output);
  if (!m) throw new Error(`no transaction count in pgbench output:\n${output}`);
  return Number(m[1]);
}

/**
 * One pgbench run through `exec` and the CPU each part used meanwhile; once more if pgbench's
 * summary is missing: kubectl exec's stream was seen to end after pgbench's first line now and
 * then under load, with pgbench's status 0.
 */
function measured(
  b: DataPathBench,
  argv: string[],
  parts: { client: string[]; hop: string[]; server: string[] },
  containers: Record<string, string[]>,
): {
  out: string;
  used: Record<"client" | "hop" | "server" | "machine", number>;
  byContainer: Record<string, number>;
} {
  for (let attempt = 1; ; attempt++) {
    const sample = () => ({
      client: cgroupCpuNs(parts.client),
      hop: cgroupCpuNs(parts.hop),
      server: cgroupCpuNs(parts.server),
      machine: machineBusyNs(),
      containers: Object.fromEntries(Object.entries(containers).map(([n, dirs]) => [n, cgroupCpuNs(dirs)])),
    });
    const before = sample();
    const out = b.exec(argv);
    const after = sample();
    if (/number of transactions actually processed/.test(out) || attempt === 2)
      return {
        out,
        used: {
          client: after.client - before.client,
          hop: after.hop - before.hop,
          server: after.server - before.server,
          machine: after.machine - before.machine,
        },
        byContainer: Object.fromEntries(
          Object.keys(containers).map((n) => [n, (after.containers[n] ?? 0) - (before.containers[n] ?? 0)]),
        ),
      };
    b.log("  (pgbench's summary is missing from the exec stream; running it again)");
  }
}

const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / Math.max(1, xs.length);

export function runDataPathBench(b: DataPathBench): Record<string, PathFigures> {
  const seconds = String(b.seconds);
  const conn = (p: BenchPath) => ["-h", p.host, "-p", String(p.port), "-U", "postgres"];
  const samples: Record<string, Record<string, { tps: number[]; cpu: CpuPerTx[] }>> = {};
  const connect: Record<string, number[]> = {};
  const containerNs: Record<string, Record<string, number>> = {};
  const containerTx: Record<string, number> = {};
  for (let r = 0; r < b.rounds; r++) {
    // Odd rounds run the paths in reverse, so none always goes first.
    const order = r % 2 === 0 ? b.paths : [...b.paths].reverse();
    for (const p of order) {
      const parts = { client: b.clientCgroups(), hop: p.hopCgroups(), server: b.serverCgroups() };
      const containers = p.hopContainers?.() ?? {};
      for (const w of p.connectOnly ? [] : b.workloads) {
        for (const c of b.clients) {
          const script = w === "select" ? ["-S"] : [];
          const argv = [
            "pgbench",
            ...conn(p),
            "-n",
            ...script,
            "-T",
            seconds,
            "-c",
            String(c),
            "-j",
            String(Math.min(c, 2)),
            "postgres",
          ];
          const { out, used, byContainer } = measured(b, argv, parts, containers);
          const tx = Math.max(1, transactions(out));
          containerTx[p.name] = (containerTx[p.name] ?? 0) + tx;
          for (const [n, ns] of Object.entries(byContainer))
            (containerNs[p.name] ??= {})[n] = (containerNs[p.name]?.[n] ?? 0) + ns;
          const us = (ns: number) => ns / 1000 / tx;
          const cpu: CpuPerTx = {
            client: us(used.client),
            hop: us(used.hop),
            server: us(used.server),
            other: Math.max(0, us(used.machine - used.client - used.hop - used.server)),
          };
          const tps = pgbenchTps(out);
          const cell = ((samples[p.name] ??= {})[cellKey(w, c)] ??= { tps: [], cpu: [] });
          cell.tps.push(tps);
          cell.cpu.push(cpu);
          b.log(
            `round ${r + 1}/${b.rounds} ${p.name.padEnd(22)} ${w.padEnd(6)} c=${String(c).padEnd(2)} ${tps.toFixed(0).padStart(6)} tps  µs/tx client ${cpu.client.toFixed(0)} hop ${cpu.hop.toFixed(0)} server ${cpu.server.toFixed(0)} other ${cpu.other.toFixed(0)}`,
          );
        }
      }
      const fresh = latencyMs(
        measured(
          b,
          ["pgbench", ...conn(p), "-n", "-S", "-C", "-T", seconds, "-c", "1", "postgres"],
          { client: [], hop: [], server: [] },
          {},
        ).out,
      );
      (connect[p.name] ??= []).push(fresh);
      b.log(`round ${r + 1}/${b.rounds} ${p.name.padEnd(22)} connect ${fresh.toFixed(2)} ms`);
    }
  }
  return Object.fromEntries(
    b.paths.map((p) => {
      const cells: Record<string, Cell> = {};
      for (const [k, s] of Object.entries(samples[p.name] ?? {})) {
        cells[k] = {
          tps: mean(s.tps),
          cpu: {
            client: mean(s.cpu.map((x) => x.client)),
            hop: mean(s.cpu.map((x) => x.hop)),
            server: mean(s.cpu.map((x) => x.server)),
            other: mean(s.cpu.map((x) => x.other)),
          },
        };
      }
      const byContainer = containerNs[p.name];
      const tx = containerTx[p.name] ?? 1;
      return [
        p.name,
        {
          cells,
          connectMs: mean(connect[p.name] ?? []),
          ...(byContainer
            ? {
                hopByContainer: Object.fromEntries(
                  Object.entries(byContainer).map(([n, ns]) => [n, ns / 1000 / tx]),
                ),
              }
            : {}),
        },
      ];
    }),
  );
}

/** The report: TPS ratios against the first path (direct), connect time, and CPU per transaction. */
export function renderDataPathReport(
  figures: Record<string, PathFigures>,
  workloads: Workload[],
  clients: number[],
): string {
  const names = Object.keys(figures);
  const base = figures[names[0] ?? ""];
  if (!base) return "(no figures)\n";
  const keys = workloads.flatMap((w) => clients.map((c) => cellKey(w, c)));
  const head = ["path", ...keys.map((k) => `${k} tps (×)`), "connect ms (Δ)"];
  const rows = names.map((n) => {
    const f = figures[n]!;
    return [
      n,
      ...keys.map((k) => {
        if (!f.cells[k]) return "";
        const t = f.cells[k].tps;
        const d = base.cells[k]?.tps ?? NaN;
        return `${t.toFixed(0)} (${(t / d).toFixed(2)})`;
      }),
      `${f.connectMs.toFixed(2)} (${f.connectMs - base.connectMs >= 0 ? "+" : ""}${(f.connectMs - base.connectMs).toFixed(2)})`,
    ];
  });
  const cpuHead = ["path", "cell", "client", "hop", "server", "other", "total µs/tx"];
  const cpuRows = names.flatMap((n) =>
    keys.flatMap((k) => {
      const c = figures[n]!.cells[k]?.cpu;
      if (!c) return [];
      const total = c.client + c.hop + c.server + c.other;
      return [[n, k, ...[c.client, c.hop, c.server, c.other, total].map((x) => x.toFixed(0))]];
    }),
  );
  const split = names
    .filter((n) => figures[n]!.hopByContainer)
    .map(
      (n) =>
        `${n}: ${Object.entries(figures[n]!.hopByContainer!)
          .map(([c, us]) => `${c} ${us.toFixed(0)}`)
          .join(", ")} (µs per transaction, every cell)`,
    );
  return `${markdownTable(head, rows)}\n${split.length ? `The hop's CPU by container:\n${split.join("\n")}\n\n` : ""}CPU per transaction (µs; "other" is busy CPU no measured pod is charged for: softirq, kube-proxy, the kubelet):\n\n${markdownTable(cpuHead, cpuRows)}`;
}

function markdownTable(head: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [line(head), line(head.map(() => "---")), ...rows.map(line)].join("\n") + "\n";
}
