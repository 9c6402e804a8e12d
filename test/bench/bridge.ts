/**
 * Benchmark of the Crossplane bridge (not a test: it asserts nothing and fails only when the
 * stack cannot be brought up). Brings up what the bridge e2e does — a local control plane
 * API server, Crossplane core composing XTCPConnections into NetworkPaths, the bridge as a
 * process, a real PostgreSQL — and prints:
 *
 * - a trace per single claim of where its create→Ready time goes: the XR created, the
 *   NetworkPath composed, the bridge's reconcile (queued, finalizer, stack, engine run, status
 *   write; from its "reconcile trace" log), and Crossplane copying the status back to the XR
 *   and the claim; p50/p95 over `--singles` claims;
 * - for each size in `--sizes` (N, or NxM for N claims spread over M namespaces): the time
 *   until all N claims are Ready and the bridge's peak RSS, as ratios against the first
 *   single claim measured in the same run (a fresh group, like each scale run's).
 *
 * Times are wall clock on a shared machine: compare the ratios, not the seconds, across runs.
 *
 *   npm run bench:bridge -- --singles 10 --sizes 10,100,100x10,500
 */
import { spawnSync, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as k8s from "@kubernetes/client-node";
import { Command } from "commander";
import { reapOrphans } from "../../programs/bridge/orphans";
import { LocalClusters } from "../../host/local-clusters";
import { LocalCrossplane } from "../../host/local-clusters/crossplane";
import { toolchainEnv } from "../../host/automation/toolchain";
import { startBridgeProcess, stopBridgeProcess } from "../helpers/bridge-process";
import { crossplaneWithConnectorApi } from "../helpers/crossplane-connector";
import { portsFor, type FilePorts } from "../helpers/ports";
import { Postgres } from "../helpers/pg-haproxy";

const GROUP = "klutch.anynines.com";
const CP = "bench-cp";

interface Obj {
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: { connection?: string; consumerNamespace?: string };
  status?: { hostForConsumer?: string; port?: number; conditions?: { type: string; status: string }[] };
}

/** When each step of one claim was first seen (ms since the epoch). */
interface Trace {
  applied: number;
  xr?: number;
  path?: number;
  pathReady?: number;
  xrReady?: number;
  ready?: number;
}

const ready = (o: Obj) =>
  Boolean(o.status?.hostForConsumer && o.status.port) &&
  Boolean(o.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"));

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? NaN;
}

const sec = (ms: number | undefined) => (ms === undefined || Number.isNaN(ms) ? "-" : (ms / 1000).toFixed(2));

function rssKiB(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
    return Number(m?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** Stops the HAProxy processes the bridge started (by the pid files in its proxies dir). */
function stopProxies(dir: string): void {
  for (const group of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
    try {
      const pid = Number(
        fs
          .readFileSync(path.join(dir, group, "haproxy.pid"), "utf8")
          .trim()
          .split(/\s+/)[0],
      );
      if (Number.isInteger(pid) && pid > 0) process.kill(pid, "SIGTERM");
    } catch {
      // No pid file, or the process is gone.
    }
  }
}

/** The bridge's "reconcile trace" lines of one group that had paths waiting for an endpoint. */
function tracesOf(logFile: string, group: string): Record<string, number>[] {
  return fs
    .readFileSync(logFile, "utf8")
    .split("\n")
    .filter((l) => l.includes('"reconcile trace"'))
    .map((l) => JSON.parse(l) as Record<string, number> & { group: string })
    .filter((t) => t.group === group && (t.waiting ?? 0) > 0);
}

/**
 * The bridge's ports for one run: one slot per group the run makes (the singles' one, and each
 * size's namespaces), each slot big enough for the largest group plus HAProxy's two own
 * listeners, and two spare. So the figures are the bridge's and the engine's, not slot growth
 * (lib/bridge/slots.ts; the bridge e2e covers growth, in place and into further blocks). From
 * this file's own band (test/helpers/ports.ts), after its ops port.
 */
function benchPorts(
  ports: FilePorts,
  sizes: { n: number; spread: number }[],
): { from: number; to: number; slotSize: number } {
  const groups = 1 + sizes.reduce((sum, s) => sum + s.spread, 0);
  const slotSize = Math.max(50, ...sizes.map((s) => Math.ceil(s.n / s.spread) + 2));
  return { ...ports.block((groups + 2) * slotSize), slotSize };
}

async function main(): Promise<void> {
  const o = new Command()
    .option("--singles <n>", "single claims measured one after another (the first is the baseline)", "10")
    .option("--sizes <list>", "claims applied at once: N (one namespace) or NxM (M namespaces)", "10,100")
    .option("--concurrency <n>", "the bridge's --concurrency", "2")
    .option("--keep", "leave the work dir (logs) in place")
    .parse()
    .opts<{ singles: string; sizes: string; concurrency: string; keep?: boolean }>();
  const sizes = o.sizes.split(",").map((s) => {
    const [n, m] = s.split("x").map(Number);
    return { n: n as number, spread: m ?? 1 };
  });
  const hostPorts = portsFor(__filename);
  const opsPort = hostPorts.one();
  const range = benchPorts(hostPorts, sizes);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-bridge-bench-"));
  const env = toolchainEnv();
  const clusters = new LocalClusters(path.join(work, "clusters"));
  let crossplane: LocalCrossplane | undefined;
  let pg: Postgres | undefined;
  let bridge: ChildProcess | undefined;
  const bridgeDir = path.join(work, "bridge");
  const say = (line: string) => process.stdout.write(`${line}\n`);
  // Ctrl-C or a kill stops the wait and still runs the clean-up below (clusters, proxies, PostgreSQL).
  let interrupted: string | undefined;
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.once(signal, () => {
      interrupted = signal;
      say(`\n${signal}: stopping, cleaning up`);
    });
  try {
    say(`work dir ${work}; bringing up the control plane, Crossplane and PostgreSQL`);
    await clusters.up([CP]);
    const kubeconfig = clusters.kubeconfigPath(CP);
    crossplane = await crossplaneWithConnectorApi(kubeconfig, path.join(work, "clusters"), CP, env);
    pg = await Postgres.start();

    const kc = new k8s.KubeConfig();
    kc.loadFromFile(kubeconfig);
    const api = kc.makeApiClient(k8s.CustomObjectsApi);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    for (let i = 0; i < 60; i++) {
      const r = spawnSync("kubectl", ["--kubeconfig", kubeconfig, "get", "crd", "tcpconnections." + GROUP], {
        env,
      });
      if (r.status === 0) break;
      await new Promise((r) => setTimeout(r, 1000));
    }

    // Every claim's steps, keyed by namespace/name; XRs and paths are matched by their names.
    const traces = new Map<string, Trace>();
    const xrOwner = new Map<string, string>();
    const seen = (kind: string, o: Obj) => {
      const now = Date.now();
      let key: string | undefined;
      if (kind === "claim") key = `${o.metadata.namespace}/${o.metadata.name}`;
      else if (kind === "xr") {
        const l = o.metadata.labels ?? {};
        key = `${l["crossplane.io/claim-namespace"]}/${l["crossplane.io/claim-name"]}`;
        xrOwner.set(o.metadata.name, key);
      } else key = xrOwner.get(o.spec?.connection ?? "");
      const t = key === undefined ? undefined : traces.get(key);
      if (!t) return;
      if (kind === "claim" && !t.ready && ready(o)) t.ready = now;
      if (kind === "xr") {
        t.xr ??= now;
        if (!t.xrReady && ready(o)) t.xrReady = now;
      }
      if (kind === "path") {
        t.path ??= now;
        if (!t.pathReady && ready(o)) t.pathReady = now;
      }
    };
    const watches: AbortController[] = [];
    const watch = new k8s.Watch(kc);
    for (const [kind, url] of [
      ["xr", `/apis/${GROUP}/v1/xtcpconnections`],
      ["path", `/apis/${GROUP}/v1alpha1/networkpaths`],
      ["claim", `/apis/${GROUP}/v1/tcpconnections`],
    ] as const) {
      const start = (): void => {
        void watch
          .watch(
            url,
            {},
            (_type: string, obj: Obj) => seen(kind, obj),
            () => {
              if (watches.length > 0) setTimeout(start, 200);
            },
          )
          .then((a) => watches.push(a));
      };
      start();
    }

    const logFile = path.join(work, "bridge.log");
    bridge = startBridgeProcess({
      work,
      kubeconfig,
      stateDir: bridgeDir,
      opsPort,
      portRange: range,
      PATH: env.PATH,
      extra: ["--settings", "", "--slot-size", String(range.slotSize), "--concurrency", o.concurrency],
    });
    const pid = bridge.pid as number;
    let peakKiB = 0;
    const sampler = setInterval(() => (peakKiB = Math.max(peakKiB, rssKiB(pid))), 500);

    const nsMade = new Set<string>();
    const ensureNamespace = async (ns: string) => {
      if (nsMade.has(ns)) return;
      await core.createNamespace({ body: { metadata: { name: ns } } });
      nsMade.add(ns);
    };
    const apply = async (ns: string, name: string) => {
      await ensureNamespace(ns);
      traces.set(`${ns}/${name}`, { applied: Date.now() });
      await api.createNamespacedCustomObject({
        group: GROUP,
        version: "v1",
        namespace: ns,
        plural: "tcpconnections",
        body: {
          apiVersion: `${GROUP}/v1`,
          kind: "TCPConnection",
          metadata: { name, namespace: ns },
          spec: { instanceHost: "127.0.0.1", port: pg!.port, enhancements: [{ InstanceType: "PostgreSQL" }] },
        },
      });
    };
    const allReady = async (keys: string[], timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      while (keys.some((k) => !traces.get(k)?.ready)) {
        if (interrupted) throw new Error(`interrupted by ${interrupted}`);
        if (Date.now() > deadline) {
          const left = keys.filter((k) => !traces.get(k)?.ready).length;
          throw new Error(
            `${left} of ${keys.length} claims not Ready after ${timeoutMs / 1000} s; see ${logFile}`,
          );
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      return (
        Math.max(...keys.map((k) => traces.get(k)!.ready!)) -
        Math.min(...keys.map((k) => traces.get(k)!.applied))
      );
    };

    // Single claims, one after another, in one namespace: the first makes the group (its stack,
    // its proxy) and is the baseline of the scale runs below, each of which makes a group too;
    // the others are what a team adding a connection sees.
    say(`\nsingle claims: applied → Ready, one at a time (${o.singles})`);
    say(
      "s after applied: XR, path composed, path Ready, XR Ready, claim Ready | bridge (s): queued, finalizer, engine run, status write, composite nudge",
    );
    const singles: number[] = [];
    for (let i = 0; i < Number(o.singles); i++) {
      const key = `bench-single/c-${i}`;
      await apply("bench-single", `c-${i}`);
      const total = await allReady([key], 180_000);
      singles.push(total);
      const t = traces.get(key)!;
      const rel = (x?: number) => sec(x === undefined ? undefined : x - t.applied);
      const b = tracesOf(logFile, "bench-single/proxy")[i] ?? {};
      say(
        `#${i}: ${[t.xr, t.path, t.pathReady, t.xrReady, t.ready].map(rel).join(" ")} | ${[b.queuedMs, b.finalizers, b.up, b.status, b.nudge].map(sec).join(" ")}`,
      );
    }
    const baseline = singles[0] as number;
    const baseKiB = rssKiB(pid);
    say(`single claims: p50 ${sec(quantile(singles, 0.5))} s, p95 ${sec(quantile(singles, 0.95))} s`);
    const warm = singles.slice(1);
    if (warm.length > 0)
      say(
        `  added to the existing group (#1…): p50 ${sec(quantile(warm, 0.5))} s, p95 ${sec(quantile(warm, 0.95))} s; the group's first (#0): ${sec(singles[0])} s`,
      );
    say(`baseline (first single claim): ${sec(baseline)} s; bridge RSS ${Math.round(baseKiB / 1024)} MiB`);

    say("\nclaims at once → all Ready");
    say("claims  namespaces  all-Ready(s)  ×baseline  peak-RSS(MiB)  ×baseline");
    for (const s of sizes) {
      peakKiB = rssKiB(pid);
      const keys: string[] = [];
      const tag = `bench-${s.n}x${s.spread}`;
      for (let m = 0; m < s.spread; m++) await ensureNamespace(`${tag}-${m}`);
      await Promise.all(
        Array.from({ length: s.n }, (_, i) => {
          const ns = `${tag}-${i % s.spread}`;
          keys.push(`${ns}/c-${i}`);
          return apply(ns, `c-${i}`);
        }),
      );
      const total = await allReady(keys, 30 * 60_000);
      say(
        `${String(s.n).padEnd(7)} ${String(s.spread).padEnd(11)} ${sec(total).padEnd(13)} ${(total / baseline).toFixed(1).padEnd(10)} ${String(Math.round(peakKiB / 1024)).padEnd(14)} ${(peakKiB / baseKiB).toFixed(2)}`,
      );
    }
    clearInterval(sampler);
    const traceLines = fs
      .readFileSync(logFile, "utf8")
      .split("\n")
      .filter((l) => l.includes('"reconcile trace"'));
    say(`\nbridge reconcile traces (${traceLines.length}), last 5:`);
    for (const l of traceLines.slice(-5)) say(l);
    for (const w of watches.splice(0)) w.abort();
  } finally {
    await stopBridgeProcess(bridge);
    await crossplane?.stop();
    await clusters.down().catch(() => undefined);
    stopProxies(path.join(bridgeDir, "proxies"));
    await reapOrphans(`file://${path.join(bridgeDir, "state")}`, () => undefined);
    await pg?.destroy().catch(() => undefined);
    if (!o.keep) fs.rmSync(work, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e: Error) => {
    process.stderr.write(`bench: ${e.stack ?? e.message}\n`);
    process.exit(1);
  },
);
