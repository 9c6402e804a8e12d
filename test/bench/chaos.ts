/**
 * A bounded chaos run on the running local stack (not a test: it asserts nothing). Connections
 * in two consumer namespaces (two groups, two proxies) to one PostgreSQL instance of the local
 * backend, a prober pod in each app cluster that opens every path once a second, and the claims'
 * status read once a second; then, round after round, one fault at random (seeded): a proxy pod,
 * a proxy Deployment, Service or ConfigMap, the instance's pod, the bridge's leader pod. After
 * each it waits until every path is usable again, and reports per round the time to a working
 * path, the longest outage, whether the ports stayed, and how long a claim said Ready=True while
 * its path refused (the goal: nothing beyond one probe interval).
 *
 *   npm run up && npm run bench:chaos -- [--rounds 12] [--connections 3] [--seed 1] [--bound 180]
 */
import { execFile, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { Command } from "commander";
import { repoRoot, toolchainEnv } from "../../host/automation/toolchain";
import { eventually, kubectl, kubectlApply, kubectlJson } from "../helpers/kubectl";
import { postgresqlInstance } from "../helpers/data-service-claims";
import { FAULTS, inflict, proberPod, type Fault, type ProbeTarget } from "../helpers/chaos-faults";
import {
  falseReadyStretches,
  longestOutages,
  recoveredAt,
  type ProbeSample,
  type StatusSample,
} from "../helpers/chaos-timeline";

const INSTANCE_NS = "cluster-app-1";
const INSTANCE = "chaos-pg";
const CONSUMERS: Record<string, string> = { "cluster-app-1": "app-1", "cluster-app-2": "app-2" };
const PROBE_NS = "chaos-probe";
const INTERVAL_MS = 1000;
const env = { ...toolchainEnv(), GOGC: "400" };
const run = promisify(execFile);

/** A small seeded generator (mulberry32), so a run can be repeated fault for fault. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Claim {
  metadata: { name: string; namespace: string };
  status?: { hostForConsumer?: string; port?: number; conditions?: { type: string; status: string }[] };
}

async function main(): Promise<void> {
  const opts = new Command()
    .option("--rounds <n>", "faults, one per round", "12")
    .option("--connections <n>", "connections per consumer namespace", "3")
    .option("--seed <n>", "seed of the faults' order and targets", "1")
    .option("--bound <s>", "seconds a round may take to be usable again", "180")
    .option("--faults <list>", `of ${FAULTS.join(", ")}`, FAULTS.join(","))
    .option("--keep", "leave the connections, the instance and the probers")
    .option(
      "--samples <file>",
      "write every probe, status read and fault time there (JSON), to look into a round",
    )
    .parse()
    .opts<{
      rounds: string;
      connections: string;
      seed: string;
      bound: string;
      faults: string;
      keep?: boolean;
      samples?: string;
    }>();
  const faults = opts.faults.split(",").map((f) => f.trim()) as Fault[];
  for (const f of faults)
    if (!FAULTS.includes(f)) throw new Error(`--faults: "${f}" is not one of ${FAULTS.join(", ")}`);
  const random = seeded(Number(opts.seed));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const stateDir = process.env.KLUTCH_LOCAL_DIR ?? path.join(repoRoot, ".klutch", "local");
  const kc = (cluster: string) => path.join(stateDir, cluster, "kubeconfig");
  const cp = kc("control-plane");
  const apply = (k: string, doc: object) => {
    const r = kubectlApply(k, JSON.stringify(doc));
    if (r.status !== 0) throw new Error(r.stderr);
  };
  const started = Date.now();
  const step = (what: string) =>
    console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${what}`);
  if (!fs.existsSync(cp)) throw new Error(`no local stack at ${stateDir}: run \`npm run up\` first`);

  step("the PostgreSQL instance and the connections");
  apply(cp, postgresqlInstance(INSTANCE, INSTANCE_NS));
  const claimNames = Object.keys(CONSUMERS).flatMap((ns) =>
    Array.from({ length: Number(opts.connections) }, (_, i) => ({ ns, name: `chaos-${i}` })),
  );
  const instanceHost = `${INSTANCE}-pg.${INSTANCE_NS}.svc.cluster.local`;
  for (const { ns, name } of claimNames)
    apply(cp, {
      apiVersion: "klutch.anynines.com/v1",
      kind: "TCPConnection",
      metadata: { name, namespace: ns },
      spec: { instanceHost, port: 5432 },
    });
  const isReady = (c: Claim) =>
    c.status?.conditions?.some((x) => x.type === "Ready" && x.status === "True") ?? false;
  const ours = (items: Claim[]) => items.filter((c) => c.metadata.name.startsWith("chaos-"));
  let claims: Claim[] = [];
  await eventually(
    "every connection Ready",
    () => {
      claims = ours(kubectlJson<{ items: Claim[] }>(cp, ["get", "tcpconnections", "-A"]).items);
      return claims.length === claimNames.length && claims.every(isReady);
    },
    300_000,
  );
  const id = (c: Claim) => `${c.metadata.namespace}/${c.metadata.name}`;
  const ports = new Map(claims.map((c) => [id(c), c.status!.port!]));
  const paths = [...ports.keys()];

  step("a prober pod in each app cluster, and the status read once a second");
  const probes: ProbeSample[] = [];
  const statuses: StatusSample[] = [];
  const streams: ReturnType<typeof spawn>[] = [];
  for (const [ns, cluster] of Object.entries(CONSUMERS)) {
    const image = JSON.parse(fs.readFileSync(path.join(stateDir, cluster, "node", "node.json"), "utf8"))
      .images.bridge as string;
    const targets: ProbeTarget[] = claims
      .filter((c) => c.metadata.namespace === ns)
      .map((c) => ({ path: id(c), host: c.status!.hostForConsumer!, port: c.status!.port! }));
    apply(kc(cluster), { apiVersion: "v1", kind: "Namespace", metadata: { name: PROBE_NS } });
    kubectl(kc(cluster), ["-n", PROBE_NS, "delete", "pod", "prober", "--ignore-not-found"]);
    apply(kc(cluster), proberPod("prober", PROBE_NS, image, targets));
    kubectl(kc(cluster), ["-n", PROBE_NS, "wait", "pod/prober", "--for=condition=Ready", "--timeout=120s"]);
    const logs = spawn("kubectl", ["--kubeconfig", kc(cluster), "-n", PROBE_NS, "logs", "-f", "prober"], {
      env,
    });
    let rest = "";
    logs.stdout.on("data", (d: Buffer) => {
      const lines = (rest + d.toString()).split("\n");
      rest = lines.pop() ?? "";
      for (const l of lines) if (l.startsWith("{")) probes.push(JSON.parse(l) as ProbeSample);
    });
    streams.push(logs);
  }
  let sampling = true;
  // The claims' status (what a user reads) and, to tell the bridge's part from Crossplane's
  // copying, the bridge's own NetworkPaths (labelled with their claim by Crossplane).
  const pathStatuses: StatusSample[] = [];
  const sample = async (
    plural: string,
    into: StatusSample[],
    idOf: (c: Claim & { metadata: { labels?: Record<string, string> } }) => string,
  ) => {
    const out = await run("kubectl", ["--kubeconfig", cp, "get", plural, "-A", "-o", "json"], {
      env,
      maxBuffer: 64 << 20,
    }).catch(() => undefined);
    const at = Date.now();
    const items = out
      ? (JSON.parse(out.stdout) as { items: (Claim & { metadata: { labels?: Record<string, string> } })[] })
          .items
      : [];
    for (const c of items) {
      const path = idOf(c);
      if (!ports.has(path)) continue;
      into.push({ at, path, ready: isReady(c), ...(c.status?.port ? { port: c.status.port } : {}) });
    }
  };
  const sampler = (async () => {
    while (sampling) {
      const t = Date.now();
      await Promise.all([
        sample("tcpconnections", statuses, id),
        sample("networkpaths.klutch.anynines.com", pathStatuses, (c) => {
          const l = c.metadata.labels ?? {};
          return `${l["crossplane.io/claim-namespace"] ?? ""}/${l["crossplane.io/claim-name"] ?? ""}`;
        }),
      ]);
      await new Promise((r) => setTimeout(r, Math.max(0, INTERVAL_MS - (Date.now() - t))));
    }
  })();
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  await sleep(10_000);
  const baseline = probes.filter((p) => !p.ok).length;
  step(`baseline: ${probes.length} probes, ${baseline} failed`);

  interface Round {
    fault: Fault;
    at: number;
    deleted: string;
    recoverS?: number;
    outageS: number;
    falseReadyS: number;
    beyondS: number;
    /** The same of the bridge's NetworkPaths, before Crossplane copies them into the claims. */
    pathBeyondS: number;
    portsKept: boolean;
  }
  const rounds: Round[] = [];
  const bound = Number(opts.bound) * 1000;
  // Each fault once in every len(faults) rounds, each block in a seeded order (Fisher-Yates).
  const order: Fault[] = [];
  while (order.length < Number(opts.rounds)) {
    const block: Fault[] = [...faults];
    for (let i = block.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [block[i], block[j]] = [block[j]!, block[i]!];
    }
    order.push(...block.slice(0, Number(opts.rounds) - order.length));
  }
  for (const [n, fault] of order.entries()) {
    const consumerNamespace = pick(Object.keys(CONSUMERS));
    const t0 = Date.now();
    const deleted = inflict(fault, {
      controlPlane: cp,
      consumerNamespace,
      instanceNamespace: INSTANCE_NS,
      instanceSelector: `klutch.anynines.com/postgresql=${INSTANCE}`,
      pick,
    });
    const since = () => probes.filter((p) => p.at >= t0);
    const portsNow = () => {
      const last = new Map<string, StatusSample>();
      for (const s of statuses) if (s.at >= t0) last.set(s.path, s);
      return paths.every((p) => last.get(p)?.ready === true && last.get(p)?.port === ports.get(p));
    };
    let recovered: number | undefined;
    await eventually(
      "every path usable again",
      () => {
        recovered = recoveredAt(since(), paths, 3);
        return (recovered !== undefined && portsNow()) || Date.now() - t0 > bound;
      },
      bound + 10_000,
    );
    await sleep(3_000);
    const window = probes.filter((p) => p.at >= t0);
    const lies = falseReadyStretches(window, statuses, INTERVAL_MS);
    const beyondInterval = (stretches: typeof lies) =>
      stretches.reduce((s, l) => s + Math.max(0, l.to - l.from - INTERVAL_MS), 0) / 1000;
    const round: Round = {
      fault,
      at: t0,
      deleted: `${fault.startsWith("proxy") ? `${consumerNamespace}: ` : ""}${deleted}`,
      ...(recovered !== undefined ? { recoverS: (recovered - t0) / 1000 } : {}),
      outageS: Math.max(0, ...longestOutages(window, INTERVAL_MS).values()) / 1000,
      falseReadyS: lies.reduce((s, l) => s + l.to - l.from, 0) / 1000,
      beyondS: beyondInterval(lies),
      pathBeyondS: beyondInterval(falseReadyStretches(window, pathStatuses, INTERVAL_MS)),
      portsKept: portsNow(),
    };
    rounds.push(round);
    step(
      `round ${n + 1}: ${round.deleted} → usable again ${round.recoverS?.toFixed(1) ?? "never"} s; longest outage ${round.outageS.toFixed(1)} s; Ready while refusing ${round.falseReadyS.toFixed(1)} s (${round.beyondS.toFixed(1)} s beyond the probe interval; the NetworkPaths ${round.pathBeyondS.toFixed(1)} s); ports ${round.portsKept ? "kept" : "MOVED or not Ready"}`,
    );
    await sleep(5_000);
  }
  sampling = false;
  await sampler;
  for (const s of streams) s.kill();
  if (opts.samples)
    fs.writeFileSync(opts.samples, JSON.stringify({ rounds, probes, statuses, pathStatuses }));

  console.log(
    "\n| fault | rounds | usable again, longest (s) | longest outage (s) | Ready while refusing, total (s) | beyond the probe interval (s) | the NetworkPaths beyond it (s) | ports kept |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
  for (const fault of FAULTS) {
    const of = rounds.filter((r) => r.fault === fault);
    if (of.length === 0) continue;
    const max = (f: (r: Round) => number) => Math.max(...of.map(f)).toFixed(1);
    console.log(
      `| ${fault} | ${of.length} | ${of.some((r) => r.recoverS === undefined) ? "not within the bound" : max((r) => r.recoverS!)} | ${max((r) => r.outageS)} | ${of.reduce((s, r) => s + r.falseReadyS, 0).toFixed(1)} | ${of.reduce((s, r) => s + r.beyondS, 0).toFixed(1)} | ${of.reduce((s, r) => s + r.pathBeyondS, 0).toFixed(1)} | ${of.every((r) => r.portsKept) ? "yes" : "no"} |`,
    );
  }
  const beyond = rounds.reduce((s, r) => s + r.beyondS, 0);
  const pathBeyond = rounds.reduce((s, r) => s + r.pathBeyondS, 0);
  const all = rounds.every((r) => r.recoverS !== undefined);
  console.log(
    `\n${probes.length} probes of ${paths.length} paths over ${rounds.length} rounds (seed ${opts.seed}).`,
  );
  console.log(
    `goal, no claim Ready beyond one probe interval while its path refused: ${beyond === 0 ? "met" : `MISSED (${beyond.toFixed(1)} s)`}`,
  );
  console.log(
    `  of which the bridge's NetworkPaths said Ready beyond one probe interval while refusing: ${pathBeyond.toFixed(1)} s (the rest is Crossplane copying their status into the composites and claims)`,
  );
  console.log(`goal, every path usable again within ${opts.bound} s: ${all ? "met" : "MISSED"}`);
  console.log(`goal, every path keeps its port: ${rounds.every((r) => r.portsKept) ? "met" : "MISSED"}`);

  if (!opts.keep) {
    step("removing the connections, the instance and the probers");
    for (const cluster of Object.values(CONSUMERS))
      kubectl(kc(cluster), ["delete", "namespace", PROBE_NS, "--wait=false", "--ignore-not-found"]);
    for (const { ns, name } of claimNames)
      kubectl(cp, ["-n", ns, "delete", "tcpconnection", name, "--wait=false"]);
    kubectl(cp, ["-n", INSTANCE_NS, "delete", "postgresqlinstance", INSTANCE, "--wait=false"]);
  }
}

main().catch((e: Error) => {
  console.error(e.message);
  process.exit(1);
});
