/**
 * What a database connection pays for the network path (not a test: it asserts nothing).
 *
 * Brings up a local cluster with one node of its own, a PostgreSQL pod and a consumer pod, and
 * between them every path an app can be given, each set up by the project's own code:
 *
 * - direct: the PostgreSQL pod's IP (the baseline);
 * - kernel hop: the KernelPath component (the proxy's `hop: kernel`): a Service with no selector
 *   and an EndpointSlice to that IP, so kube-proxy's DNAT is the only thing in between;
 * - proxy pods: the TcpProxy component as the bridge deploys it (ClusterIP, 2 replicas,
 *   HAProxy), plus the variants named by --proxy-variants, each a TcpProxy of its own;
 * - WireGuard pods: the WireguardTunnel component (client forwarder, wireguard-go, gateway).
 *
 * then runs test/helpers/data-path-bench.ts: pgbench -S and TPC-B at each client count and the
 * connect time, alternating the paths each round, with CPU per transaction from the pods'
 * cgroups. Prints ratios against direct and the goals met or missed.
 *
 *   npm run bench:paths -- [--seconds 5] [--rounds 2] [--clients 1,4,16] [--keep]
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Command } from "commander";
import * as k8s from "@pulumi/kubernetes";
import type * as pulumi from "@pulumi/pulumi";
import { LocalClusters } from "../../host/local-clusters";
import { TcpProxy } from "../../network/proxy/tcp-proxy";
import { KernelPath } from "../../network/proxy/kernel-path";
import type { HaproxyOptions } from "../../network/proxy/model/haproxy-config";
import { WireguardTunnel } from "../../network/wireguard/wireguard-tunnel";
import { inlineStack, upOrExplain } from "../helpers/inline-stack";
import { postgresDeployment } from "../helpers/node-postgres";
import { eventually, kubectlApply, kubectlJson, kubectlTry } from "../helpers/kubectl";
import { livePods, podReady } from "../helpers/kube-objects";
import {
  cellKey,
  containerCgroup,
  podCgroup,
  renderDataPathReport,
  runDataPathBench,
  type BenchPath,
  type PathFigures,
  type Workload,
} from "../helpers/data-path-bench";

const CLUSTER = "bench-paths";
const DATA_NS = "bench-data";
const APP_NS = "bench-app";
const WG_NS = "bench-wg";
const PASSWORD = "data-paths-bench-only";

/**
 * WireGuard variants: environment set on the tunnel containers (wireguard-go) after `up`, each on
 * a tunnel of its own.
 */
const WIREGUARD_VARIANTS: Record<string, Record<string, string>> = {
  "gomaxprocs-1": { GOMAXPROCS: "1" },
};
const wgName = (v: string) => (v === "default" ? "wgb" : `wgb-${v}`);
const wgNamespace = (v: string) => (v === "default" ? WG_NS : `${WG_NS}-${v}`);

/** Proxy variants the benchmark can deploy beside the default, each a candidate for cutting the proxy hop's cost. */
const PROXY_VARIANTS: Record<
  string,
  { haproxy?: Omit<HaproxyOptions, "bindAddress" | "statsPort" | "healthPort">; cpuRequest?: string }
> = {
  "1-thread": { haproxy: { nbthread: 1 } },
  "no-conn-log": { haproxy: { logConnections: false } },
  // Three times the default CPU request: a larger share of a saturated CPU (set after `up`; as
  // much as a 2-CPU node has room for beside the rest, a rolling update's third pod included).
  "request-300m": { cpuRequest: "300m" },
};

async function main(): Promise<void> {
  const opts = new Command()
    .option("--seconds <n>", "seconds per pgbench run", "5")
    .option("--rounds <n>", "rounds over every path", "2")
    .option("--clients <list>", "client counts", "1,4,16")
    .option("--workloads <list>", "select and/or tpcb", "select,tpcb")
    .option("--proxy-variants <list>", `of ${Object.keys(PROXY_VARIANTS).join(", ")}; "" for none`, "")
    .option(
      "--wireguard-variants <list>",
      `of ${Object.keys(WIREGUARD_VARIANTS).join(", ")}; "" for none`,
      "",
    )
    .option("--scale <n>", "pgbench scale factor", "8")
    .option("--keep", "leave the cluster running (prints its kubeconfig)")
    .parse()
    .opts<{
      seconds: string;
      rounds: string;
      clients: string;
      workloads: string;
      proxyVariants: string;
      wireguardVariants: string;
      scale: string;
      keep?: boolean;
    }>();
  const clients = opts.clients.split(",").map(Number);
  const workloads = opts.workloads.split(",") as Workload[];
  const variants = opts.proxyVariants.split(",").filter(Boolean);
  for (const v of variants)
    if (!PROXY_VARIANTS[v])
      throw new Error(`--proxy-variants: "${v}" is not one of ${Object.keys(PROXY_VARIANTS).join(", ")}`);
  const wgVariants = opts.wireguardVariants.split(",").filter(Boolean);
  for (const v of wgVariants)
    if (!WIREGUARD_VARIANTS[v])
      throw new Error(
        `--wireguard-variants: "${v}" is not one of ${Object.keys(WIREGUARD_VARIANTS).join(", ")}`,
      );
  const started = Date.now();
  const step = (what: string) =>
    console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${what}`);

  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-bench-paths-"));
  const clusters = new LocalClusters(path.join(work, "clusters"));
  const kc = () => clusters.kubeconfigPath(CLUSTER);
  const apply = (doc: object) => {
    const r = kubectlApply(kc(), JSON.stringify(doc));
    if (r.status !== 0) throw new Error(r.stderr);
  };
  const pods = (ns: string, selector: string) => livePods(kc(), ns, selector);
  const cgroupsOf = (ns: string, selector: string) => () =>
    pods(ns, selector).map((p) => podCgroup(p.metadata.uid));
  /** The containers of the matching pods, by container name (so where in the hop CPU goes). */
  const containersOf = (sets: [string, string][]) => () => {
    const out: Record<string, string[]> = {};
    for (const [ns, selector] of sets)
      for (const p of pods(ns, selector)) {
        const dir = podCgroup(p.metadata.uid);
        for (const c of p.status.containerStatuses ?? [])
          if (c.containerID)
            (out[`${p.metadata.name.replace(/-[a-z0-9]+-[a-z0-9]+$/, "")}/${c.name}`] ??= []).push(
              containerCgroup(dir, c.containerID),
            );
      }
    return out;
  };

  try {
    step("a local cluster with one node");
    const [info] = await clusters.up([{ name: CLUSTER, nodes: 1 }]);
    const node = info?.node;
    if (!node) throw new Error("the cluster has no node");
    const proxyNamespaces = ["default", ...variants].map((v) => `bench-proxy-${v}`);
    for (const ns of [DATA_NS, APP_NS, ...["default", ...wgVariants].map(wgNamespace), ...proxyNamespaces])
      apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    await eventually(
      "the namespaces' service accounts",
      () =>
        [DATA_NS, APP_NS].every((ns) => kubectlTry(kc(), ["get", "sa", "default", "-n", ns]).status === 0),
      60_000,
    );

    step("PostgreSQL and the consumer pod (both Burstable, as a data service and an app are)");
    apply(
      postgresDeployment({
        name: "pg",
        namespace: DATA_NS,
        image: node.images.postgres,
        password: PASSWORD,
        resources: { requests: { cpu: "500m", memory: "256Mi" } },
      }),
    );
    apply(
      postgresDeployment({
        name: "consumer",
        namespace: APP_NS,
        image: node.images.postgres,
        password: PASSWORD,
        clientPassword: true,
        resources: { requests: { cpu: "250m", memory: "128Mi" } },
      }),
    );
    await eventually(
      "PostgreSQL and the consumer to be Ready",
      () => [...pods(DATA_NS, "app=pg"), ...pods(APP_NS, "app=consumer")].filter(podReady).length === 2,
      180_000,
    );
    const pgIp = pods(DATA_NS, "app=pg")[0]?.status.podIP;
    if (!pgIp) throw new Error("the PostgreSQL pod has no IP");

    step(
      `the proxy pods (${["default", ...variants].join(", ")}) and the WireGuard pods, through the Pulumi engine`,
    );
    const adminKubeconfig = fs.readFileSync(kc(), "utf8");
    const program = () => {
      const provider = new k8s.Provider("bench", { kubeconfig: adminKubeconfig });
      const endpoints: Record<string, pulumi.Output<unknown>> = {};
      // The kernel hop as the bridge builds it (`hop: kernel`): a selector-less Service and an
      // EndpointSlice naming the PostgreSQL pod.
      const kernel = new KernelPath("pg-kernel", {
        provider,
        namespace: DATA_NS,
        connections: [{ id: `${DATA_NS}/pg`, instanceHost: pgIp, port: 5432 }],
        portRange: { from: 5432, to: 5432 },
        serviceType: "ClusterIP",
      }).endpoints;
      for (const v of ["default", ...variants]) {
        const proxy = new TcpProxy(`bp-${v}`, {
          provider,
          namespace: `bench-proxy-${v}`,
          connections: [{ id: `${DATA_NS}/pg`, instanceHost: pgIp, port: 5432 }],
          serviceType: "ClusterIP",
          image: node.images.haproxy,
          ...(PROXY_VARIANTS[v]?.haproxy ? { haproxy: PROXY_VARIANTS[v].haproxy } : {}),
        });
        endpoints[v] = proxy.endpoints;
      }
      const tunnels: Record<string, pulumi.Output<unknown>> = {};
      ["default", ...wgVariants].forEach((v, i) => {
        const name = wgName(v);
        tunnels[v] = new WireguardTunnel(name, {
          gatewayProvider: provider,
          gatewayNamespace: wgNamespace(v),
          appClusters: [{ name: "app", provider, namespace: APP_NS }],
          connections: [{ name: "pg", appCluster: "app", instanceHost: pgIp, port: 5432 }],
          tunnelCidr: `100.${96 + i}.0.0/24`,
          endpoint: `${name}-gateway.${wgNamespace(v)}.svc.cluster.local:51820`,
          gatewayServiceType: "ClusterIP",
          image: node.images.wireguard,
          forwarderImage: node.images.wireguard,
        }).endpoints;
      });
      return Promise.resolve({ proxies: endpoints, wireguard: tunnels, kernel });
    };
    const stack = await inlineStack({
      projectName: "bench-paths",
      stackName: "bench",
      workDir: work,
      passphrase: "bench-paths-only",
      program,
    });
    const up = await upOrExplain(stack);
    type Endpoints = Record<string, { hostForConsumer: string; port: number }>;
    const proxies = up.outputs.proxies?.value as Record<string, Endpoints>;
    const tunnels = up.outputs.wireguard?.value as Record<string, Endpoints>;
    const kernelEndpoint = (up.outputs.kernel?.value as Endpoints)[`${DATA_NS}/pg`];
    if (!kernelEndpoint) throw new Error("the kernel path has no endpoint");
    for (const v of variants) {
      const request = PROXY_VARIANTS[v]?.cpuRequest;
      if (!request) continue;
      const d = `deployment/bp-${v}`;
      const r = kubectlTry(kc(), [
        "-n",
        `bench-proxy-${v}`,
        "set",
        "resources",
        d,
        `--requests=cpu=${request}`,
      ]);
      if (r.status !== 0) throw new Error(r.stderr);
      const w = kubectlTry(kc(), ["-n", `bench-proxy-${v}`, "rollout", "status", d, "--timeout=180s"]);
      if (w.status !== 0) throw new Error(w.stderr);
    }
    for (const v of wgVariants) {
      const env = Object.entries(WIREGUARD_VARIANTS[v] ?? {}).map(([k, x]) => `${k}=${x}`);
      for (const [ns, d] of [
        [wgNamespace(v), `${wgName(v)}-gateway`],
        [APP_NS, `${wgName(v)}-client`],
      ] as const) {
        const r = kubectlTry(kc(), ["-n", ns, "set", "env", `deployment/${d}`, "-c", "wireguard", ...env]);
        if (r.status !== 0) throw new Error(r.stderr);
        const w = kubectlTry(kc(), ["-n", ns, "rollout", "status", `deployment/${d}`, "--timeout=180s"]);
        if (w.status !== 0) throw new Error(w.stderr);
      }
    }
    const [consumer] = pods(APP_NS, "app=consumer");
    if (!consumer) throw new Error("no consumer pod");
    const exec = (argv: string[]) => {
      const r = kubectlTry(kc(), ["-n", APP_NS, "exec", consumer.metadata.name, "--", ...argv]);
      if (r.status !== 0) throw new Error(`${argv.join(" ")}: ${r.stderr}`);
      return r.stdout;
    };
    // Every path is dialled by address: a name costs a DNS lookup per connection (with the pod's
    // ndots:5, a cluster name is first tried against each search domain), which is the same for
    // every path and would hide the hop. One connect-only path measures what the name costs.
    const addressOf = (host: string) => {
      const [svc, ns] = host.split(".");
      const service = kubectlJson<{ spec: { clusterIP?: string } }>(kc(), [
        "-n",
        ns ?? "",
        "get",
        "service",
        svc ?? "",
      ]);
      if (service.spec.clusterIP && service.spec.clusterIP !== "None") return service.spec.clusterIP;
      // A headless Service (the WireGuard client's): its one ready endpoint.
      const slices = kubectlJson<{ items: { endpoints?: { addresses: string[] }[] }[] }>(kc(), [
        "-n",
        ns ?? "",
        "get",
        "endpointslices",
        "-l",
        `kubernetes.io/service-name=${svc}`,
      ]);
      const ip = slices.items.flatMap((s) => s.endpoints ?? []).flatMap((e) => e.addresses)[0];
      if (!ip) throw new Error(`${host} has no address`);
      return ip;
    };
    const paths: BenchPath[] = [
      { name: "direct", host: pgIp, port: 5432, hopCgroups: () => [] },
      {
        name: "kernel hop",
        host: addressOf(kernelEndpoint.hostForConsumer),
        port: kernelEndpoint.port,
        hopCgroups: () => [],
      },
      ...["default", ...variants].map((v) => {
        const e = proxies[v]?.[`${DATA_NS}/pg`];
        if (!e) throw new Error(`proxy ${v} has no endpoint`);
        return {
          name: v === "default" ? "proxy pods" : `proxy pods, ${v}`,
          host: addressOf(e.hostForConsumer),
          port: e.port,
          hopCgroups: cgroupsOf(`bench-proxy-${v}`, `app.kubernetes.io/instance=bp-${v}`),
          hopContainers: containersOf([[`bench-proxy-${v}`, `app.kubernetes.io/instance=bp-${v}`]]),
        };
      }),
      ...["default", ...wgVariants].map((v) => {
        const e = tunnels[v]?.pg;
        if (!e) throw new Error(`tunnel ${v} has no endpoint for pg`);
        const sets: [string, string][] = [
          [wgNamespace(v), `app.kubernetes.io/component=gateway,app.kubernetes.io/instance=${wgName(v)}`],
          [APP_NS, `app.kubernetes.io/component=client,app.kubernetes.io/instance=${wgName(v)}`],
        ];
        return {
          name: v === "default" ? "wireguard pods" : `wireguard pods, ${v}`,
          host: addressOf(e.hostForConsumer),
          port: e.port,
          hopCgroups: () => sets.flatMap(([ns, sel]) => cgroupsOf(ns, sel)()),
          hopContainers: containersOf(sets),
        };
      }),
    ];
    const proxyByName = proxies.default?.[`${DATA_NS}/pg`];
    if (proxyByName)
      paths.push({
        name: "proxy pods, by DNS name",
        host: proxyByName.hostForConsumer,
        port: proxyByName.port,
        hopCgroups: () => [],
        connectOnly: true,
      });
    await eventually(
      "every path to answer",
      () =>
        paths.every(
          (p) =>
            kubectlTry(kc(), [
              "-n",
              APP_NS,
              "exec",
              consumer.metadata.name,
              "--",
              "psql",
              `host=${p.host} port=${p.port} user=postgres dbname=postgres connect_timeout=5 sslmode=disable`,
              "-tAc",
              "select 1",
            ]).stdout.trim() === "1",
        ),
      120_000,
    );

    step(`pgbench -i -s ${opts.scale}`);
    exec(["pgbench", "-h", pgIp, "-U", "postgres", "-i", "-s", opts.scale, "-q", "postgres"]);
    step(
      `measuring: ${paths.length} paths × (${workloads.join(", ")}) × clients ${clients.join(", ")} + connect, ${opts.seconds} s each, ${opts.rounds} rounds`,
    );
    const figures = runDataPathBench({
      exec,
      paths,
      clientCgroups: cgroupsOf(APP_NS, "app=consumer"),
      serverCgroups: cgroupsOf(DATA_NS, "app=pg"),
      workloads,
      clients,
      seconds: Number(opts.seconds),
      rounds: Number(opts.rounds),
      log: (l) => console.log(`  ${l}`),
    });
    console.log(`\n${renderDataPathReport(figures, workloads, clients)}`);
    console.log(goals(figures, workloads, clients));
    step("done");
    if (opts.keep) console.log(`the cluster stays up: KUBECONFIG=${kc()}`);
  } finally {
    if (!opts.keep) {
      await clusters.down().catch((e: Error) => console.error(`cluster down: ${e.message}`));
      fs.rmSync(work, { recursive: true, force: true });
    }
  }
}

/** The data path's goals (docs/network-paths.md) against this run's figures, met or missed. */
function goals(figures: Record<string, PathFigures>, workloads: Workload[], clients: number[]): string {
  const direct = figures.direct;
  if (!direct) return "";
  const ratio = (p: string, k: string) => (figures[p]?.cells[k]?.tps ?? NaN) / (direct.cells[k]?.tps ?? NaN);
  const worst = (p: string, cs: number[]) =>
    Math.min(...workloads.flatMap((w) => cs.map((c) => ratio(p, cellKey(w, c)))));
  const out: string[] = ["goals (this run, ratios against direct):"];
  const say = (what: string, value: number, goal: number, unit = "×") =>
    out.push(
      `  ${what}: ${value.toFixed(2)}${unit} (goal ${goal}${unit}): ${value >= goal ? "met" : "missed"}`,
    );
  const many = clients.filter((c) => c >= 4);
  if (figures["proxy pods"]) {
    say("proxy pods, worst of 4+ clients", worst("proxy pods", many), 0.8);
    const dc = figures["proxy pods"].connectMs - direct.connectMs;
    out.push(`  proxy pods connect: +${dc.toFixed(2)} ms (goal ≤ +1 ms): ${dc <= 1 ? "met" : "missed"}`);
  }
  if (figures["kernel hop"]) say("kernel hop, worst of all", worst("kernel hop", clients), 0.95);
  if (figures["wireguard pods"]) say("wireguard pods, worst of all", worst("wireguard pods", clients), 0.4);
  return out.join("\n");
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
