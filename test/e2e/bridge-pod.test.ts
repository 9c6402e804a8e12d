import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as k8s from "@pulumi/kubernetes";
import { LocalWorkspace, type Stack } from "@pulumi/pulumi/automation";
import { BridgeDeployment } from "../../components/bridge/bridge-deployment";
import { BridgeIdentity } from "../../components/bridge/bridge-identity";
import { NETWORK_PATH_GROUP, NETWORK_PATH_PLURAL, NETWORK_PATH_VERSION } from "../../lib/bridge/api";
import { LEADER_LEASE } from "../../lib/bridge/lease";
import { SETTINGS_CONFIGMAP, SETTINGS_NAMESPACE } from "../../lib/bridge/settings";
import { LocalClusters, type NodeInfo } from "../../local-clusters";
import { LocalCluster } from "../../local-clusters/cluster";
import { ensureKubernetesPlugin, pulumiEnv } from "../../tooling/pulumi-runner";
import { toolchainEnv } from "../../tooling/toolchain";
import { proxyPodsBench } from "../bench/proxy-pods";
import { claimDiagnosis } from "../helpers/claim-diagnosis";
import { crossplaneWithConnectorApi } from "../helpers/crossplane-connector";
import { eventually, kubectl, kubectlApply, kubectlJson, kubectlTry } from "../helpers/kubectl";
import { postgresDeployment } from "../helpers/node-postgres";
import type { LocalCrossplane } from "../../local-clusters/crossplane";

const CP = "bridge-pod-cp";
const NS = "team-a";
const PROXY_NS = SETTINGS_NAMESPACE;
/** Inside the NodePort range: TcpProxy gives each Service port the same NodePort. */
const PORT_RANGE = "30100-30199";

interface Pod {
  metadata: { name: string; deletionTimestamp?: string; labels?: Record<string, string> };
  status: { phase?: string; conditions?: { type: string; status: string }[] };
}
interface Claim {
  metadata: { name: string };
  status?: { hostForConsumer?: string; port?: number; conditions?: { type: string; status: string }[] };
}

const podReady = (p: Pod) =>
  p.status.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true;

/**
 * The Crossplane bridge as pods, end to end and all real: a local control plane with a node,
 * Crossplane core composing XTCPConnections into NetworkPaths (a process, as in bridge.test.ts:
 * its image cannot be pulled here), a PostgreSQL pod as the data service, and the bridge
 * Deployment (BridgeIdentity + BridgeDeployment through the real Pulumi engine, which waits for
 * its pods to be Ready) realising claims with `--target kubernetes`: TcpProxy pods of the local
 * HAProxy image that Pulumi waits for too (no --skip-await).
 */
describe("Crossplane bridge as pods on a node (e2e)", function () {
  this.timeout(30 * 60_000);

  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-bridge-pod-"));
  const stateDir = path.join(work, "clusters");
  const env = toolchainEnv();
  const clusters = new LocalClusters(stateDir);
  const kc = () => clusters.kubeconfigPath(CP);
  const pgPassword = crypto.randomBytes(12).toString("hex");
  let node: NodeInfo;
  let crossplane: LocalCrossplane | undefined;
  let stack: Stack | undefined;
  // The instance's host as a data service reports it (a Service's DNS name, as a8s does):
  // the proxy pods and the bridge's probe resolve it through the node's cluster DNS.
  const pgHost = `pg.${NS}.svc.cluster.local`;
  let pgNodePort = 0;

  const pods = (ns: string, selector: string) =>
    kubectlJson<{ items: Pod[] }>(kc(), ["get", "pods", "-n", ns, "-l", selector]).items.filter(
      (p) => !p.metadata.deletionTimestamp,
    );
  const bridgePods = () =>
    pods(PROXY_NS, "app.kubernetes.io/name=klutch-bridge,app.kubernetes.io/instance=bridge");
  const claims = () => kubectlJson<{ items: Claim[] }>(kc(), ["-n", NS, "get", "tcpconnections"]).items;
  const claimReady = (c: Claim | undefined) =>
    Boolean(c?.status?.hostForConsumer && c.status.port) &&
    c?.status?.conditions?.some((x) => x.type === "Ready" && x.status === "True") === true;
  const claim = (name: string) =>
    JSON.stringify({
      apiVersion: "klutch.anynines.com/v1",
      kind: "TCPConnection",
      metadata: { name, namespace: NS },
      spec: { instanceHost: pgHost, port: 5432, enhancements: [{ InstanceType: "PostgreSQL" }] },
    });
  const bridgeLogs = () =>
    bridgePods()
      .map((p) => {
        const r = kubectlTry(kc(), ["-n", PROXY_NS, "logs", p.metadata.name, "--tail=25"]);
        return `--- ${p.metadata.name}:\n${r.stdout}${r.stderr}`;
      })
      .join("\n");

  async function waitClaimReady(name: string): Promise<Claim> {
    let last: Claim | undefined;
    await eventually(
      `TCPConnection ${name} to be Ready with an endpoint`,
      () => {
        last = claims().find((c) => c.metadata.name === name);
        return claimReady(last);
      },
      300_000,
    ).catch((e: Error) => {
      throw new Error(
        `${e.message}\n${claimDiagnosis(kc(), NS, name, crossplane?.logFile)}\n${bridgeLogs()}`,
      );
    });
    return last!;
  }

  /** psql `select 42` from inside the PostgreSQL pod (a pod on the cluster network). */
  function psqlFromPod(host: string, port: number): string {
    const [pg] = pods(NS, "app=pg");
    const r = kubectlTry(kc(), [
      "-n",
      NS,
      "exec",
      pg?.metadata.name ?? "",
      "--",
      "psql",
      `host=${host} port=${port} user=postgres dbname=postgres connect_timeout=5 sslmode=disable`,
      "-tAc",
      "select 42",
    ]);
    return r.status === 0 ? r.stdout.trim() : r.stderr;
  }

  function psqlFromHost(port: number): string {
    const r = spawnSync(
      "psql",
      [
        `host=${node.nodeAddress} port=${port} user=postgres dbname=postgres connect_timeout=5 sslmode=disable`,
        "-tAc",
        "select 42",
      ],
      { encoding: "utf8", env: { ...process.env, PGPASSWORD: pgPassword }, timeout: 20_000 },
    );
    return r.status === 0 ? r.stdout.trim() : r.stderr;
  }

  /** The TcpProxy Service of the claim's group, and its pods. */
  const proxyService = () =>
    kubectlJson<{
      metadata: { name: string };
      spec: {
        clusterIP: string;
        selector: Record<string, string>;
        ports: { port: number; nodePort: number }[];
      };
    }>(kc(), ["-n", PROXY_NS, "get", "service", `np-${NS}-proxy`]);
  const proxyPods = () =>
    pods(
      PROXY_NS,
      Object.entries(proxyService().spec.selector)
        .map(([k, v]) => `${k}=${v}`)
        .join(","),
    );

  /** The bridge processes of this run's pods (their cgroups are under the node's), with their memory. */
  function bridgeProcesses(): { pid: number; cgroup: string; rssMiB: number }[] {
    return fs
      .readdirSync("/proc")
      .filter((d) => /^\d+$/.test(d))
      .flatMap((pid) => {
        try {
          const argv = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
          if (argv[1] !== "/app/bridge/main.js") return [];
          const cgroup = fs.readFileSync(`/proc/${pid}/cgroup`, "utf8");
          if (!cgroup.includes(`/${node.netns}/`)) return [];
          const rss = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
          return [{ pid: Number(pid), cgroup, rssMiB: Math.round(Number(rss ?? 0) / 1024) }];
        } catch {
          return [];
        }
      });
  }

  before(async () => {
    const [cp] = await clusters.up([{ name: CP, nodes: 1 }]);
    assert.ok(cp?.node, "the control plane has a node");
    node = cp.node;
    assert.ok(node.images.bridge, "the node imported the bridge image");

    crossplane = await crossplaneWithConnectorApi(kc(), stateDir, CP, env);
    for (const ns of [NS, PROXY_NS]) kubectl(kc(), ["create", "namespace", ns]);

    // The data service: PostgreSQL from the local image, a ClusterIP the proxies reach and a
    // NodePort for the direct baseline of the benchmark.
    const pg = postgresDeployment({
      name: "pg",
      namespace: NS,
      image: node.images.postgres,
      password: pgPassword,
      clientPassword: true,
      // A data service with requests, as deployed for real (Burstable, not BestEffort).
      resources: { requests: { cpu: "250m", memory: "128Mi" } },
    });
    for (const doc of [
      pg,
      {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "pg", namespace: NS },
        spec: { type: "NodePort", selector: { app: "pg" }, ports: [{ port: 5432, targetPort: 5432 }] },
      },
    ]) {
      const r = kubectlApply(kc(), JSON.stringify(doc));
      assert.equal(r.status, 0, r.stderr);
    }
    await eventually("PostgreSQL to be Ready", () => pods(NS, "app=pg").some(podReady), 180_000);
    const svc = kubectlJson<{ spec: { ports: { nodePort: number }[] } }>(kc(), [
      "-n",
      NS,
      "get",
      "service",
      "pg",
    ]);
    pgNodePort = svc.spec.ports[0]?.nodePort ?? 0;
  });

  after(async () => {
    try {
      if (stack) {
        // The bridge releases its proxies before it goes.
        kubectlTry(kc(), ["-n", NS, "delete", "tcpconnections", "--all", "--wait=true", "--timeout=180s"]);
        await stack.destroy({ onOutput: () => undefined }).catch(() => undefined);
      }
      await crossplane?.stop();
      await clusters.down();
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  });

  it("a pod reaches the API server through the kubernetes Service by in-cluster config: allowed calls work, others are refused", async () => {
    const endpoints = kubectlJson<{ endpoints: { addresses: string[] }[]; ports: { port: number }[] }>(kc(), [
      "-n",
      "default",
      "get",
      "endpointslice",
      "kubernetes",
    ]);
    assert.deepEqual(endpoints.endpoints[0]?.addresses, [node.hostAddress]);
    // An identity that may list NetworkPaths and nothing in kube-system.
    kubectl(kc(), ["-n", NS, "create", "serviceaccount", "probe"]);
    kubectl(kc(), [
      "create",
      "clusterrole",
      "probe",
      "--verb=list",
      `--resource=${NETWORK_PATH_PLURAL}.${NETWORK_PATH_GROUP}`,
    ]);
    kubectl(kc(), [
      "create",
      "clusterrolebinding",
      "probe",
      "--clusterrole=probe",
      `--serviceaccount=${NS}:probe`,
    ]);
    const script = `
const k8s = require("@kubernetes/client-node");
const kc = new k8s.KubeConfig();
kc.loadFromCluster();
const out = { server: kc.getCurrentCluster().server };
// A CRD established a moment ago may answer 429 "storage is (re)initializing": retry as clients do.
const retry = async (call) => {
  for (let i = 0; ; i++) {
    try { return await call(); }
    catch (e) { if (e.code !== 429 || i >= 30) throw e; await new Promise((r) => setTimeout(r, 1000)); }
  }
};
(async () => {
  const list = await retry(() => kc.makeApiClient(k8s.CustomObjectsApi).listClusterCustomObject({
    group: "${NETWORK_PATH_GROUP}", version: "${NETWORK_PATH_VERSION}", plural: "${NETWORK_PATH_PLURAL}" }));
  out.networkPaths = list.items.length;
  try { await kc.makeApiClient(k8s.CoreV1Api).listNamespacedSecret({ namespace: "kube-system" }); out.secrets = "allowed"; }
  catch (e) { out.secrets = e.code; }
  console.log(JSON.stringify(out));
})().catch((e) => { console.log(JSON.stringify({ error: String(e) })); process.exit(1); });`;
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "in-cluster-probe", namespace: NS },
      spec: {
        serviceAccountName: "probe",
        restartPolicy: "Never",
        containers: [
          {
            name: "probe",
            image: node.images.bridge,
            imagePullPolicy: "Never",
            command: ["/usr/local/bin/node", "-e", script],
            securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
          },
        ],
      },
    };
    assert.equal(kubectlApply(kc(), JSON.stringify(pod)).status, 0);
    await eventually(
      "the probe pod to finish",
      () =>
        ["Succeeded", "Failed"].includes(
          kubectlJson<Pod>(kc(), ["-n", NS, "get", "pod", "in-cluster-probe"]).status.phase ?? "",
        ),
      120_000,
    );
    const logs = kubectl(kc(), ["-n", NS, "logs", "in-cluster-probe"]).trim();
    const result = JSON.parse(logs.split("\n").pop() ?? "{}") as {
      server?: string;
      networkPaths?: number;
      secrets?: unknown;
    };
    assert.equal(result.server, "https://10.96.0.1:443", logs);
    assert.equal(result.networkPaths, 0, logs);
    assert.equal(result.secrets, 403, logs);
  });

  let firstReady: Claim;

  it("the bridge Deployment (2 replicas, leader election, BridgeIdentity's account) becomes Ready through pulumi up; one replica leads", async () => {
    // The data plane is this cluster: the proxies' own identity, admin of their namespace only.
    kubectl(kc(), ["-n", PROXY_NS, "create", "serviceaccount", "klutch-proxies"]);
    kubectl(kc(), [
      "-n",
      PROXY_NS,
      "create",
      "rolebinding",
      "klutch-proxies",
      "--clusterrole=admin",
      `--serviceaccount=${PROXY_NS}:klutch-proxies`,
    ]);
    const token = kubectl(kc(), [
      "-n",
      PROXY_NS,
      "create",
      "token",
      "klutch-proxies",
      "--duration=4h",
    ]).trim();
    const ca = fs.readFileSync(new LocalCluster(stateDir, CP).pki.caCert).toString("base64");
    const dataPlaneKubeconfig = JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [
        {
          name: "data-plane",
          cluster: { server: "https://10.96.0.1:443", "certificate-authority-data": ca },
        },
      ],
      users: [{ name: "proxies", user: { token } }],
      contexts: [{ name: "data-plane", context: { cluster: "data-plane", user: "proxies" } }],
      "current-context": "data-plane",
    });
    const adminKubeconfig = fs.readFileSync(kc(), "utf8");
    const passphrase = crypto.randomBytes(24).toString("base64");
    const program = () => {
      const provider = new k8s.Provider("cp", { kubeconfig: adminKubeconfig });
      const identity = new BridgeIdentity("bridge-identity", {
        provider,
        namespace: PROXY_NS,
        coordination: { namespace: PROXY_NS, settings: SETTINGS_CONFIGMAP, lease: LEADER_LEASE },
      });
      const bridge = new BridgeDeployment(
        "bridge",
        {
          provider,
          namespace: PROXY_NS,
          serviceAccountName: identity.serviceAccountName,
          image: node.images.bridge as string,
          imagePullPolicy: "Never",
          state: { kind: "hostPath", path: path.join(work, "bridge-state") },
          passphrase,
          dataPlaneKubeconfig,
          bridgeFlags: [
            "--service-type",
            "NodePort",
            "--allowed-sources",
            "10.0.0.0/8,172.30.0.0/16",
            "--port-range",
            PORT_RANGE,
            "--proxy-image",
            node.images.haproxy as string,
          ],
        },
        { dependsOn: [identity] },
      );
      return Promise.resolve({ deployment: bridge.deploymentName });
    };
    const stackEnv = pulumiEnv("bridge-pod-e2e", {
      ...process.env,
      PULUMI_BACKEND_URL: `file://${path.join(work, "pulumi-state")}`,
      PULUMI_CONFIG_PASSPHRASE: passphrase,
    });
    fs.mkdirSync(path.join(work, "pulumi-state"), { recursive: true });
    ensureKubernetesPlugin(stackEnv);
    // The Automation API finds the CLI on this process's PATH, not on envVars'.
    process.env.PATH = stackEnv.PATH;
    const envVars = Object.fromEntries(
      Object.entries(stackEnv).filter((e): e is [string, string] => typeof e[1] === "string"),
    );
    stack = await LocalWorkspace.createOrSelectStack(
      { projectName: "bridge-pod-e2e", stackName: "e2e", program },
      { envVars, workDir: work },
    );
    const lines: string[] = [];
    const started = Date.now();
    await stack.up({ onOutput: (l) => lines.push(l) }).catch((e: Error) => {
      throw new Error(`${e.message}\n${lines.slice(-30).join("")}\n${bridgeLogs()}`);
    });
    process.stdout.write(
      `      pulumi up of the bridge Deployment (waits for Ready): ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );
    // Pulumi waited for the Deployment's rollout: both pods Ready (their /readyz probes pass).
    const list = bridgePods();
    assert.equal(list.length, 2);
    assert.ok(list.every(podReady), JSON.stringify(list.map((p) => p.status.conditions)));
    await eventually(
      "one replica to hold the Lease",
      () => {
        const lease = kubectlTry(kc(), ["-n", PROXY_NS, "get", "lease", LEADER_LEASE, "-o", "json"]);
        if (lease.status !== 0) return false;
        const holder =
          (JSON.parse(lease.stdout) as { spec: { holderIdentity?: string } }).spec.holderIdentity ?? "";
        return list.some((p) => holder.startsWith(`${p.metadata.name}-`));
      },
      120_000,
    );
    // No secret in the pod spec: the passphrase is a mounted file.
    const spec = kubectl(kc(), ["-n", PROXY_NS, "get", "deployment", "bridge", "-o", "json"]);
    assert.ok(!spec.includes(passphrase) && !spec.includes(token), "the pod spec holds no secret");
  });

  it("a TCPConnection is realised by the bridge pod: Ready with an endpoint, TcpProxy pods Ready; psql from a pod via hostForConsumer (the Service's DNS name) and its ClusterIP, and via the NodePort from the host", async () => {
    const applied = Date.now();
    assert.equal(kubectlApply(kc(), claim("orders")).status, 0);
    firstReady = await waitClaimReady("orders");
    process.stdout.write(
      `      claim applied → Ready through the bridge pod: ${((Date.now() - applied) / 1000).toFixed(1)} s\n`,
    );
    const svc = proxyService();
    assert.equal(firstReady.status?.hostForConsumer, `${svc.metadata.name}.${PROXY_NS}.svc.cluster.local`);
    const port = firstReady.status.port!;
    // The engine waited for the proxy Deployment (no --skip-await): its pods are Ready now.
    const proxies = proxyPods();
    assert.equal(proxies.length, 2);
    assert.ok(proxies.every(podReady));
    // A consumer pod dials hostForConsumer as written, resolved by the cluster DNS.
    assert.equal(psqlFromPod(firstReady.status.hostForConsumer, port), "42");
    assert.equal(psqlFromPod(svc.spec.clusterIP, port), "42");
    const nodePort = svc.spec.ports.find((p) => p.port === port)?.nodePort ?? 0;
    assert.equal(nodePort, port, "TcpProxy gives the NodePort the Service port's number");
    assert.equal(psqlFromHost(nodePort), "42");
    const rss = bridgeProcesses().map((p) => p.rssMiB);
    assert.equal(rss.length, 2, "both bridge pods' processes");
    process.stdout.write(`      bridge pods' resident memory after a reconcile (MiB): ${rss.join(", ")}\n`);
  });

  it("a deleted proxy pod is replaced and psql works again", async () => {
    const [victim] = proxyPods();
    kubectl(kc(), ["-n", PROXY_NS, "delete", "pod", victim!.metadata.name, "--wait=false"]);
    await eventually(
      "the proxy Deployment to have two Ready pods again, without the deleted one",
      () => {
        const list = proxyPods();
        return (
          list.length === 2 &&
          list.every(podReady) &&
          list.every((p) => p.metadata.name !== victim!.metadata.name)
        );
      },
      180_000,
    );
    const port = firstReady.status!.port!;
    await eventually(
      "psql through the proxy Service's name",
      () => psqlFromPod(firstReady.status!.hostForConsumer!, port) === "42",
      60_000,
    );
    await eventually("psql through the NodePort", () => psqlFromHost(port) === "42", 60_000);
  });

  it("pgbench -S through the proxy pods against direct (figures only; the benchmark is test/bench/proxy-pods.ts)", async () => {
    const r = await proxyPodsBench({
      host: node.nodeAddress,
      directPort: pgNodePort,
      proxyPort: firstReady.status!.port!,
      password: pgPassword,
      seconds: 5,
      rounds: 2,
      log: (l) => process.stdout.write(`      ${l}\n`),
    });
    process.stdout.write(
      `      pgbench -S: direct ${r.directTps.toFixed(0)} tps, proxy pods ${r.proxyTps.toFixed(0)} tps, ratio ${r.ratio.toFixed(3)}\n`,
    );
    assert.ok(r.directTps > 0 && r.proxyTps > 0);
  });

  const holder = () =>
    kubectlJson<{ spec: { holderIdentity?: string } }>(kc(), ["-n", PROXY_NS, "get", "lease", LEADER_LEASE])
      .spec.holderIdentity ?? "";
  const leaderPod = () => {
    const now = holder();
    const list = bridgePods();
    const leader = list.find((p) => now.startsWith(`${p.metadata.name}-`));
    assert.ok(leader, `a bridge pod holds the Lease (${now})`);
    return { leader, standby: list.find((p) => p !== leader)! };
  };

  /** The standby holds the Lease, a new claim is realised, every claim still serves psql. */
  async function takenOver(standby: Pod, since: number, what: string, claimName: string): Promise<void> {
    await eventually(
      "the standby to take the Lease",
      () => holder().startsWith(`${standby.metadata.name}-`),
      180_000,
    ).catch((e: Error) => {
      throw new Error(`${e.message}\nholder: ${holder()}\n${bridgeLogs()}`);
    });
    process.stdout.write(
      `      ${what} → the standby holds the Lease: ${((Date.now() - since) / 1000).toFixed(1)} s\n`,
    );
    assert.equal(kubectlApply(kc(), claim(claimName)).status, 0);
    const created = await waitClaimReady(claimName);
    assert.equal(psqlFromHost(created.status!.port!), "42");
    // The stacks of the old leader carry on (shared state): the first claim still serves.
    assert.equal(psqlFromHost(firstReady.status!.port!), "42");
    await eventually(
      "the Deployment to have two Ready bridge pods again",
      () => {
        const list = bridgePods();
        return list.length === 2 && list.every(podReady);
      },
      180_000,
    );
  }

  it("a crashed leader (its process SIGKILLed, the Lease left held): the standby takes over when it expires and realises a new claim", async () => {
    const { leader, standby } = leaderPod();
    const uid = kubectlJson<{ metadata: { uid: string } }>(kc(), [
      "-n",
      PROXY_NS,
      "get",
      "pod",
      leader.metadata.name,
    ]).metadata.uid;
    const pids = bridgeProcesses().filter((p) => p.cgroup.includes(`pod${uid}`));
    assert.equal(pids.length, 1, `the leader pod's bridge process (${JSON.stringify(pids)})`);
    process.kill(pids[0]!.pid, "SIGKILL");
    await takenOver(standby, Date.now(), "leader crashed", "invoices");
  });

  it("killing the leader pod: the other replica takes the Lease and realises a new claim; the Deployment replaces the pod", async () => {
    const { leader, standby } = leaderPod();
    const killed = Date.now();
    kubectl(kc(), ["-n", PROXY_NS, "delete", "pod", leader.metadata.name, "--grace-period=0", "--force"]);
    await takenOver(standby, killed, "leader pod deleted", "payments");
    assert.ok(bridgePods().every((p) => p.metadata.name !== leader.metadata.name));
  });
});
