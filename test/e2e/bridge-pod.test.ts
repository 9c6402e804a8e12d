import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as k8s from "@pulumi/kubernetes";
import type { Stack } from "@pulumi/pulumi/automation";
import { BridgeDeployment } from "../../components/bridge/bridge-deployment";
import { BridgeIdentity } from "../../components/bridge/bridge-identity";
import { NETWORK_PATH_GROUP, NETWORK_PATH_PLURAL, NETWORK_PATH_VERSION } from "../../lib/bridge/api";
import { LEADER_LEASE } from "../../lib/bridge/lease";
import {
  SETTINGS_CONFIGMAP,
  SETTINGS_KEY,
  SETTINGS_NAMESPACE,
  renderBridgeSettings,
} from "../../lib/bridge/settings";
import type { WireguardSettings } from "../../network/wireguard/model/settings";
import { pulumiBackedComposition, renderResourcesMode } from "../../lib/connector-api/compositions";
import { WIREGUARD_CLIENT_NAMESPACE } from "../../network/wireguard/environment";
import { WireguardTunnel } from "../../network/wireguard/wireguard-tunnel";
import { FORWARDER_FALLBACK_PORT } from "../../network/wireguard/model/types";
import { LocalClusters, type NodeInfo } from "../../host/local-clusters";
import { LocalCluster } from "../../host/local-clusters/cluster";
import { BRIDGE_PROCESS } from "../../host/local-clusters/images/bridge-image";
import { inlineStack, upOrExplain } from "../helpers/inline-stack";
import { toolchainEnv } from "../../host/automation/toolchain";
import { dataPlaneInstanceRules, dataPlaneNodeRules, dataPlaneRules } from "../../lib/bridge/rbac";
import {
  claimYaml,
  claimsIn,
  isClaimReady,
  livePods,
  podLogTails,
  podReady,
  implementationSelector,
  waitForClaim,
  type Claim,
  type Pod,
} from "../helpers/kube-objects";
import { bandArg, nodePortsFor } from "../helpers/ports";
import { claimDiagnosis } from "../helpers/claim-diagnosis";
import { crossplaneWithConnectorApi } from "../helpers/crossplane-connector";
import { eventually, kubectl, kubectlApply, kubectlJson, kubectlTry } from "../helpers/kubectl";
import { postgresDeployment } from "../helpers/node-postgres";
import type { LocalCrossplane } from "../../host/local-clusters/crossplane";
import { BRIDGE_IMAGE_REPOSITORY } from "../../lib/release/publication";
import { releaseBridgeImage } from "../../programs/release/images";
import { releaseVersion } from "../../programs/release/version";

const CP = "bridge-pod-cp";
const NS = "team-a";
const PROXY_NS = SETTINGS_NAMESPACE;
/** Inside the NodePort range: TcpProxy gives each Service port the same NodePort. */
const NODE_PORTS = nodePortsFor(__filename);
const PORT_RANGE = bandArg(NODE_PORTS.block(100));
/**
 * The kernel-hop group's Service ports: first as a ClusterIP (no node port is taken, but they
 * come from the file's own band all the same), then as a NodePort.
 */
const KERNEL_PORTS = NODE_PORTS.block(20);
const KERNEL_NODE_PORTS = NODE_PORTS.block(20);

/** The consumer namespace of an app cluster configured for wireguard (claims land here). */
const WG_NS = "team-w";
/** The app side of the tunnel: the client pod's namespace (one cluster plays both sides). */
const WG_APP_NS = WIREGUARD_CLIENT_NAMESPACE;
const WG_TUNNEL = "wg";

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
  let tunnelStack: Stack | undefined;
  /** The release's bridge image pinned by digest (`repository@sha256:…`), once imported. */
  let releasedBridge = "";
  // The instance's host as a data service reports it (a Service's DNS name, as a8s does):
  // the proxy pods and the bridge's probe resolve it through the node's cluster DNS.
  const pgHost = `pg.${NS}.svc.cluster.local`;

  const pods = (ns: string, selector: string) => livePods(kc(), ns, selector);
  const bridgePods = () =>
    pods(PROXY_NS, "app.kubernetes.io/name=klutch-bridge,app.kubernetes.io/instance=bridge");
  const claim = (name: string) => claimYaml(name, NS, 5432, pgHost);
  const bridgeLogs = () => podLogTails(kc(), PROXY_NS, bridgePods());

  const waitClaimReady = (name: string, ns = NS): Promise<Claim> =>
    waitForClaim(kc(), ns, name, {
      timeoutMs: 300_000,
      diagnose: () => `${claimDiagnosis(kc(), ns, name, crossplane?.logFile)}\n${bridgeLogs()}`,
    });

  /** psql `select 42` from inside a PostgreSQL pod (a pod on the cluster network; team-a's by default). */
  function psqlFromPod(host: string, port: number, ns = NS, app = "pg"): string {
    const [pg] = pods(ns, `app=${app}`);
    const r = kubectlTry(kc(), [
      "-n",
      ns,
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
          if (argv[1] !== BRIDGE_PROCESS) return [];
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
        spec: { selector: { app: "pg" }, ports: [{ port: 5432, targetPort: 5432 }] },
      },
    ]) {
      const r = kubectlApply(kc(), JSON.stringify(doc));
      assert.equal(r.status, 0, r.stderr);
    }
    await eventually("PostgreSQL to be Ready", () => pods(NS, "app=pg").some(podReady), 180_000);
  });

  after(async () => {
    if (process.env.KLUTCH_E2E_KEEP_DEBUG) {
      process.stdout.write(`      kept for debugging: KUBECONFIG=${kc()}\n`);
      return;
    }
    try {
      if (stack) {
        // The bridge releases its proxies before it goes.
        for (const ns of [NS, WG_NS, "team-k"])
          kubectlTry(kc(), ["-n", ns, "delete", "tcpconnections", "--all", "--wait=true", "--timeout=180s"]);
        await stack.destroy({ onOutput: () => undefined }).catch(() => undefined);
      }
      await tunnelStack?.destroy({ onOutput: () => undefined }).catch(() => undefined);
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

  it("the release's bridge image (`npm run release`'s OCI archive) is imported into the node's containerd and named by its digest", async () => {
    const started = Date.now();
    const version = releaseVersion();
    const image = await releaseBridgeImage(path.join(work, "dist"), env);
    const archive = path.join(work, "dist", image.file);
    const built = (Date.now() - started) / 1000;
    const names = await clusters.node(CP).importArchive(archive, BRIDGE_IMAGE_REPOSITORY, env);
    releasedBridge = `${BRIDGE_IMAGE_REPOSITORY}@${image.manifestDigest}`;
    assert.deepEqual(names.sort(), [`${BRIDGE_IMAGE_REPOSITORY}:v${version}`, releasedBridge].sort());
    // Not the node's own build under another name: the release's layer is zstd, so its manifest
    // differs from the uncompressed one the node imported at start (whose tag ends in 12 hex
    // digits of its manifest digest).
    assert.ok(!node.images.bridge?.endsWith(image.manifestDigest.slice(7, 19)), node.images.bridge);
    process.stdout.write(
      `      release bridge image: ${(fs.statSync(archive).size / 2 ** 20).toFixed(1)} MiB, written in ${built.toFixed(1)} s, imported in ${((Date.now() - started) / 1000 - built).toFixed(1)} s\n`,
    );
  });

  it("the bridge Deployment of the release's image (2 replicas, leader election, BridgeIdentity's account) becomes Ready through pulumi up; one replica leads", async () => {
    assert.ok(releasedBridge, "the release's bridge image was imported");
    // The data plane is this cluster: the proxies' own identity, admin of their namespace, and
    // the cluster-wide instance reads BridgeDataPlane grants wherever an app cluster uses the
    // proxy (its health reader judges the instance Services' endpoints).
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
    const instanceReader = "klutch-proxies:instance-health";
    for (const doc of [
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: instanceReader },
        rules: dataPlaneInstanceRules(),
      },
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRoleBinding",
        metadata: { name: instanceReader },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: instanceReader },
        subjects: [{ kind: "ServiceAccount", name: "klutch-proxies", namespace: PROXY_NS }],
      },
    ]) {
      const r = kubectlApply(kc(), JSON.stringify(doc));
      assert.equal(r.status, 0, r.stderr);
    }
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
          image: releasedBridge,
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
    stack = await inlineStack({
      projectName: "bridge-pod-e2e",
      stackName: "e2e",
      workDir: work,
      stateDir: "pulumi-state",
      passphrase,
      program,
    });
    const started = Date.now();
    await upOrExplain(stack, bridgeLogs);
    process.stdout.write(
      `      pulumi up of the bridge Deployment (waits for Ready): ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );
    // Pulumi waited for the Deployment's rollout: both pods Ready (their /readyz probes pass).
    const list = bridgePods();
    assert.equal(list.length, 2);
    assert.ok(list.every(podReady), JSON.stringify(list.map((p) => p.status.conditions)));
    // The running containers are the release's image: the CRI reports the digest it resolved.
    for (const p of list) {
      const [status] = p.status.containerStatuses ?? [];
      assert.equal(status?.imageID, releasedBridge, `${p.metadata.name} runs ${status?.imageID}`);
    }
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

  it("the proxy's Deployment, Service, ConfigMap and NetworkPolicy deleted by hand: the bridge sees the drift, puts each back (DriftCorrected on the path), and psql works again on the same host and port", async () => {
    const port = firstReady.status!.port!;
    const selector = `app.kubernetes.io/instance=np-${NS}-proxy`;
    const kinds = "deployment,service,configmap,networkpolicy";
    const owned = () =>
      kubectlJson<{ items: { kind: string; metadata: { uid: string } }[] }>(kc(), [
        "-n",
        PROXY_NS,
        "get",
        kinds,
        "-l",
        selector,
      ]).items;
    const before = owned();
    assert.deepEqual([...new Set(before.map((o) => o.kind))].sort(), [
      "ConfigMap",
      "Deployment",
      "NetworkPolicy",
      "Service",
    ]);
    const deleted = Date.now();
    kubectl(kc(), ["-n", PROXY_NS, "delete", kinds, "-l", selector, "--wait=false"]);
    await eventually(
      "each kind back, as new objects, the Deployment with two Ready pods",
      () => {
        const fresh = owned().filter((o) => !before.some((b) => b.metadata.uid === o.metadata.uid));
        return fresh.length === before.length && proxyPods().length === 2 && proxyPods().every(podReady);
      },
      180_000,
    );
    await eventually(
      "psql through the proxy Service's name, on the same port",
      () => psqlFromPod(firstReady.status!.hostForConsumer!, port) === "42",
      60_000,
    );
    process.stdout.write(
      `      proxy Deployment, Service, ConfigMap, NetworkPolicy deleted → put back, psql works: ${((Date.now() - deleted) / 1000).toFixed(1)} s\n`,
    );
    await eventually("psql through the same NodePort", () => psqlFromHost(port) === "42", 60_000);
    const events = (reason: string) =>
      kubectlJson<{ items: { reason: string; message: string }[] }>(kc(), [
        "-n",
        "default",
        "get",
        "events",
        "--field-selector",
        `reason=${reason}`,
      ]).items;
    // The path said at once that it was being put back (Ready=False), then what was put back.
    assert.ok(
      events("DriftDetected").some((e) => /outside the bridge; putting it back$/.test(e.message)),
      "a DriftDetected Event (Warning, Ready=False on the path until the run reported)",
    );
    const corrected = events("DriftCorrected");
    for (const kind of ["Deployment", "Service", "ConfigMap", "NetworkPolicy"])
      assert.ok(
        corrected.some(
          (e) =>
            e.message.startsWith(`${kind} ${PROXY_NS}/`) &&
            /was deleted outside the bridge; put back/.test(e.message),
        ),
        `a DriftCorrected Event names the ${kind}: ${corrected.map((e) => e.message).join(" | ")}`,
      );
    const claimNow = await waitClaimReady("orders");
    assert.equal(claimNow.status?.port, port);
    assert.equal(claimNow.status?.hostForConsumer, firstReady.status!.hostForConsumer);
  });

  it("Ready from the data path: the instance stopped, its path says Ready=False (InstanceUnreachable, naming its Service and port) from the instance's endpoints, before HAProxy's checks fail, and the claim is not Ready; started again, both are Ready on the same port; a claim to a host that does not exist is never Ready (HAProxy's checks)", async () => {
    const port = firstReady.status!.port!;
    type Path = {
      spec: { connection: string };
      status?: { conditions?: { type: string; status: string; reason: string; message: string }[] };
    };
    const readyOf = (xr: string) =>
      kubectlJson<{ items: Path[] }>(kc(), ["get", `${NETWORK_PATH_PLURAL}.${NETWORK_PATH_GROUP}`])
        .items.find((p) => p.spec.connection === xr)
        ?.status?.conditions?.find((c) => c.type === "Ready");
    const xr = kubectlJson<Claim>(kc(), ["-n", NS, "get", "tcpconnection", "orders"]).spec.resourceRef!.name;
    const stopped = Date.now();
    kubectl(kc(), ["-n", NS, "scale", "deployment", "pg", "--replicas=0"]);
    let unready: number;
    try {
      await eventually(
        "the path Ready=False, InstanceUnreachable",
        () => readyOf(xr)?.reason === "InstanceUnreachable",
        90_000,
      );
      const down = readyOf(xr)!;
      assert.equal(down.status, "False");
      // The endpoints name the cause (the identity may read them, as BridgeDataPlane grants),
      // whether or not HAProxy's checks have failed by then.
      assert.match(down.message, new RegExp(`^Service ${NS}/pg has no ready endpoint for port 5432`));
      unready = Date.now();
      // Read on the EndpointSlice watch's event (programs/bridge/instance-watch.ts), not only at
      // the next health poll: the identity may watch the slices (dataPlaneInstanceRules).
      const logs = kubectl(kc(), [
        "-n",
        PROXY_NS,
        "logs",
        "-l",
        "app.kubernetes.io/name=klutch-bridge,app.kubernetes.io/instance=bridge",
        "--tail=-1",
      ]);
      assert.match(
        logs,
        new RegExp(`an instance's endpoints changed; reading the paths' health now.*"${NS}/pg"`),
      );
      assert.doesNotMatch(logs, /may not watch EndpointSlices/);
      await eventually(
        "the claim not Ready",
        () =>
          kubectlJson<Claim>(kc(), ["-n", NS, "get", "tcpconnection", "orders"]).status?.conditions?.some(
            (c) => c.type === "Ready" && c.status === "False",
          ) === true,
        60_000,
      );
    } finally {
      // Back whatever happened above: every later case needs the instance.
      kubectl(kc(), ["-n", NS, "scale", "deployment", "pg", "--replicas=1"]);
    }
    const started = Date.now();
    await eventually("the path Ready=True again", () => readyOf(xr)?.status === "True", 120_000);
    const back = await waitClaimReady("orders");
    assert.equal(back.status?.port, port);
    await eventually(
      "psql through the path",
      () => psqlFromPod(back.status!.hostForConsumer!, port) === "42",
      60_000,
    );
    process.stdout.write(
      `      instance stopped → path Ready=False: ${((unready - stopped) / 1000).toFixed(1)} s; started → Ready=True and psql: ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
    );
    // A path to a Service that does not exist: HAProxy's server has no address, no check passes.
    assert.equal(
      kubectlApply(kc(), claimYaml("nowhere", NS, 5432, "pg.nowhere.svc.cluster.local")).status,
      0,
    );
    const nowhereXr = await (async () => {
      let name = "";
      await eventually("the claim's composite", () => {
        name =
          kubectlJson<Claim>(kc(), ["-n", NS, "get", "tcpconnection", "nowhere"]).spec.resourceRef?.name ??
          "";
        return name !== "" && readyOf(name) !== undefined;
      });
      return name;
    })();
    await eventually(
      "the nowhere path's first status",
      () => readyOf(nowhereXr)?.reason !== undefined,
      120_000,
    );
    assert.equal(readyOf(nowhereXr)?.status, "False", JSON.stringify(readyOf(nowhereXr)));
    assert.equal(readyOf(nowhereXr)?.reason, "InstanceUnreachable");
    assert.equal(readyOf(xr)?.status, "True", "the group's working path stays Ready");
    kubectl(kc(), ["-n", NS, "delete", "tcpconnection", "nowhere", "--wait=false"]);
  });

  it("a node port the API server refuses as already allocated is held out: the group moves the new claim to a free port within seconds and says so on its path", async () => {
    // The next port the group would hand out (never used, ascending; the Service's ports are
    // the ones in use), taken first by a Service outside the group: the API server then
    // refuses the proxy's update with "provided port is already allocated", as for a leaked
    // allocation (which only an API server stopped mid-create leaves).
    const [from, to] = PORT_RANGE.split("-").map(Number) as [number, number];
    const inUse = new Set(proxyService().spec.ports.map((p) => p.nodePort));
    let blocked = from;
    while (inUse.has(blocked) && blocked < to) blocked++;
    const foreign = {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "holds-a-node-port", namespace: "default" },
      spec: { type: "NodePort", selector: { app: "none" }, ports: [{ port: 80, nodePort: blocked }] },
    };
    assert.equal(kubectlApply(kc(), JSON.stringify(foreign)).status, 0);
    try {
      const applied = Date.now();
      assert.equal(kubectlApply(kc(), claim("ledger")).status, 0);
      const ready = await waitClaimReady("ledger");
      const took = (Date.now() - applied) / 1000;
      process.stdout.write(
        `      refused node port ${blocked} → Ready on ${ready.status?.port} in ${took.toFixed(1)} s\n`,
      );
      assert.notEqual(ready.status?.port, blocked);
      assert.ok(took < 120, `ready in ${took} s: not a blind retry of the refused port`);
      // The path said why it moved: an Event with a reason of its own.
      const events = kubectlJson<{ items: { reason: string; message: string }[] }>(kc(), [
        "get",
        "events",
        "-A",
        "--field-selector",
        "reason=NodePortAllocated",
      ]).items;
      assert.ok(
        events.some((e) => e.message.includes(`refused node port ${blocked} `)),
        JSON.stringify(events.map((e) => e.message)),
      );
      assert.equal(psqlFromHost(ready.status!.port!), "42");
    } finally {
      kubectlTry(kc(), ["-n", "default", "delete", "service", "holds-a-node-port", "--wait=false"]);
    }
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

  describe("WireGuard: the bridge pod publishes each connection to the environment's tunnel pods", () => {
    let wg: WireguardSettings;
    let pgClusterIp = "";
    let pgPodIp = "";
    const wgClaim = (name: string, host: string) =>
      claimYaml(name, WG_NS, 5432, host, implementationSelector("wireguard"));
    /**
     * psql from a consumer pod in the app side's namespace. Not from the instance's own pod: a
     * consumer at the instance's address would have the forwarder's replies to it routed into
     * the tunnel (the client routes the instance host there), which no real consumer meets.
     */
    const psqlFromConsumer = (host: string, port: number) => psqlFromPod(host, port, WG_NS, "consumer");
    const tunnelPods = () => [
      ...pods(PROXY_NS, "app.kubernetes.io/name=klutch-wireguard,app.kubernetes.io/component=gateway"),
      ...pods(WG_APP_NS, "app.kubernetes.io/name=klutch-wireguard,app.kubernetes.io/component=client"),
    ];
    const podState = () =>
      tunnelPods().map((p) => ({
        name: p.metadata.name,
        restarts: (p.status as { containerStatuses?: { restartCount: number }[] }).containerStatuses?.map(
          (c) => c.restartCount,
        ),
      }));
    const clientPublicKey = () =>
      kubectl(kc(), [
        "-n",
        WG_APP_NS,
        "exec",
        clientPod(),
        "-c",
        "wireguard",
        "--",
        "wg",
        "show",
        "wg0",
        "public-key",
      ]);
    const clientPod = () =>
      pods(WG_APP_NS, "app.kubernetes.io/name=klutch-wireguard,app.kubernetes.io/component=client")[0]!
        .metadata.name;
    const gatewayPod = () =>
      pods(PROXY_NS, "app.kubernetes.io/name=klutch-wireguard,app.kubernetes.io/component=gateway")[0]!
        .metadata.name;
    const gatewayFlows = () =>
      kubectlTry(kc(), [
        "-n",
        PROXY_NS,
        "exec",
        gatewayPod(),
        "-c",
        "wireguard",
        "--",
        "nft",
        "list",
        "set",
        "inet",
        "klutch_wireguard",
        "flows",
      ]).stdout;
    /** Both ends as they are: routes, peers, the filter's flows, the agent's and gateway's logs. */
    const tunnelDiagnosis = () => {
      const run = (ns: string, pod: string, c: string, cmd: string) =>
        `$ ${cmd}\n${kubectlTry(kc(), ["-n", ns, "exec", pod, "-c", c, "--", "sh", "-c", cmd]).stdout}`;
      return [
        run(WG_APP_NS, clientPod(), "wireguard", "wg show wg0; ip route; cat /run/klutch/hosts"),
        run(PROXY_NS, gatewayPod(), "wireguard", "wg show wg0; cat /etc/klutch/flows/*"),
        gatewayFlows(),
        tunnelLogs(),
        kubectlTry(kc(), ["-n", PROXY_NS, "logs", gatewayPod(), "-c", "wireguard", "--tail=20"]).stdout,
        kubectlTry(kc(), ["get", "pods", "-A", "-o", "wide"]).stdout,
      ].join("\n");
    };
    const tunnelLogs = () =>
      ["wireguard", "forwarders"]
        .map((c) => kubectlTry(kc(), ["-n", WG_APP_NS, "logs", clientPod(), "-c", c, "--tail=40"]).stdout)
        .join("\n");

    it("the environment's tunnel with bridgeConnections through the engine: gateway and client Ready, the client has fetched its (empty) list", async () => {
      for (const ns of [WG_NS, WG_APP_NS]) kubectl(kc(), ["create", "namespace", ns]);
      assert.equal(
        kubectlApply(kc(), JSON.stringify(renderResourcesMode(pulumiBackedComposition("wireguard")))).status,
        0,
      );
      // The consumer: a PostgreSQL pod of its own, for its psql.
      const consumer = postgresDeployment({
        name: "consumer",
        namespace: WG_NS,
        image: node.images.postgres,
        password: pgPassword,
        clientPassword: true,
      });
      assert.equal(kubectlApply(kc(), JSON.stringify(consumer)).status, 0);
      const svc = kubectlJson<{ spec: { clusterIP: string } }>(kc(), ["-n", NS, "get", "service", "pg"]);
      pgClusterIp = svc.spec.clusterIP;
      pgPodIp = (pods(NS, "app=pg")[0]!.status as { podIP?: string }).podIP ?? "";
      assert.ok(pgClusterIp && pgPodIp);

      const adminKubeconfig = fs.readFileSync(kc(), "utf8");
      const tunnelWork = path.join(work, "tunnel");
      fs.mkdirSync(path.join(tunnelWork, "state"), { recursive: true });
      const program = () => {
        const provider = new k8s.Provider("cp", { kubeconfig: adminKubeconfig });
        const tunnel = new WireguardTunnel(WG_TUNNEL, {
          gatewayProvider: provider,
          gatewayNamespace: PROXY_NS,
          appClusters: [{ name: "app", provider, namespace: WG_APP_NS }],
          connections: [],
          endpoint: `${WG_TUNNEL}-gateway.${PROXY_NS}.svc.cluster.local:51820`,
          gatewayServiceType: "ClusterIP",
          image: node.images.wireguard,
          forwarderImage: node.images.wireguard,
          bridgeConnections: true,
        });
        return Promise.resolve({ bridgeSettings: tunnel.bridgeSettings });
      };
      tunnelStack = await inlineStack({
        projectName: "bridge-pod-wg-e2e",
        stackName: "e2e",
        workDir: tunnelWork,
        passphrase: "bridge-pod-wg-e2e-only",
        program,
      });
      const started = Date.now();
      const up = await upOrExplain(tunnelStack);
      process.stdout.write(
        `      pulumi up of WireguardTunnel with bridgeConnections (waits for both pods Ready): ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
      );
      // Ready means: the gateway's filter is loaded, the client has shaken hands, and its
      // agent has fetched its list from the gateway's list server through the tunnel.
      await eventually(
        "the consumer pod to be Ready",
        () => pods(WG_NS, "app=consumer").some(podReady),
        180_000,
      );
      assert.equal(tunnelPods().length, 2);
      assert.ok(tunnelPods().every(podReady));
      wg = (up.outputs.bridgeSettings?.value as Record<string, WireguardSettings>).app!;
      assert.deepEqual(wg, {
        tunnelCidr: "100.96.0.0/24",
        clientAddress: "100.96.0.2",
        flows: { namespace: PROXY_NS, name: `${WG_TUNNEL}-gateway-flows` },
        clientHost: `${WG_TUNNEL}-client.${WG_APP_NS}.svc.cluster.local`,
      });
      // What the environment stack writes for the bridge: team-w uses wireguard, with this tunnel.
      const settings = renderBridgeSettings({
        version: 1,
        consumers: { [WG_NS]: { appCluster: "app", implementation: "wireguard", wireguard: wg } },
      });
      const map = {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: SETTINGS_CONFIGMAP, namespace: PROXY_NS },
        data: { [SETTINGS_KEY]: settings },
      };
      assert.equal(kubectlApply(kc(), JSON.stringify(map)).status, 0);
    });

    it("a claim to the instance's Service name (as a binding's credentials give it) becomes Ready with the client's headless name; the gateway's flow holds the address the bridge pod resolved; psql from a pod reaches PostgreSQL through the forwarder, the tunnel and the gateway", async () => {
      const before = podState();
      const applied = Date.now();
      // The name resolves in the bridge pod, by the control plane's cluster DNS, to the ClusterIP.
      assert.equal(kubectlApply(kc(), wgClaim("wg-orders", pgHost)).status, 0);
      const ready = await waitClaimReady("wg-orders", WG_NS);
      const readyAt = Date.now();
      assert.equal(ready.status?.hostForConsumer, wg.clientHost);
      assert.equal(ready.status?.port, 5432);
      // The path works once the gateway pod sees the ConfigMap (the kubelet's sync) and the
      // client's agent its list (every 3 s).
      await eventually(
        "psql through the WireGuard path",
        () => psqlFromConsumer(wg.clientHost, 5432) === "42",
        120_000,
      ).catch((e: Error) => {
        throw new Error(
          `${e.message}\n${psqlFromConsumer(wg.clientHost, 5432)}\n${tunnelLogs()}\n${gatewayFlows()}`,
        );
      });
      process.stdout.write(
        `      wireguard claim applied → Ready: ${((readyAt - applied) / 1000).toFixed(1)} s; Ready → psql works: ${((Date.now() - readyAt) / 1000).toFixed(1)} s\n`,
      );
      assert.match(
        gatewayFlows(),
        new RegExp(
          `${wg.clientAddress.replace(/\./g, "\\.")} \\. ${pgClusterIp.replace(/\./g, "\\.")} \\. 5432`,
        ),
      );
      assert.deepEqual(podState(), before, "no tunnel pod restarted");
      // PostgreSQL sees the gateway (masquerade on its way out of the tunnel), not the client.
      const seen = kubectlTry(kc(), [
        "-n",
        WG_NS,
        "exec",
        pods(WG_NS, "app=consumer")[0]!.metadata.name,
        "--",
        "psql",
        `host=${wg.clientHost} port=5432 user=postgres dbname=postgres connect_timeout=5 sslmode=disable`,
        "-tAc",
        "select inet_client_addr()",
      ]);
      const gatewayIp = (
        pods(PROXY_NS, "app.kubernetes.io/name=klutch-wireguard,app.kubernetes.io/component=gateway")[0]!
          .status as { podIP?: string }
      ).podIP;
      assert.equal(seen.stdout.trim(), gatewayIp, seen.stderr);
    });

    it("a second connection joins the same tunnel without re-keying it (same pods, no restart); it gets the next forwarder port", async () => {
      const before = podState();
      const key = clientPublicKey();
      assert.equal(kubectlApply(kc(), wgClaim("wg-reports", pgPodIp)).status, 0);
      const ready = await waitClaimReady("wg-reports", WG_NS);
      assert.equal(ready.status?.hostForConsumer, wg.clientHost);
      assert.equal(
        ready.status?.port,
        FORWARDER_FALLBACK_PORT,
        "5432 is wg-orders' forwarder: the planner's fallback port",
      );
      await eventually(
        "psql through the second forwarder",
        () => psqlFromConsumer(wg.clientHost, FORWARDER_FALLBACK_PORT) === "42",
        120_000,
      ).catch((e: Error) => {
        throw new Error(`${e.message}\n${tunnelLogs()}\n${gatewayFlows()}`);
      });
      assert.equal(psqlFromConsumer(wg.clientHost, 5432), "42");
      assert.deepEqual(podState(), before, "same pods, no restart");
      assert.equal(clientPublicKey(), key);
    });

    it("deleting a connection removes its forwarder and its flow; the other keeps working; a host off the list is refused by the gateway", async () => {
      kubectl(kc(), ["-n", WG_NS, "delete", "tcpconnection", "wg-orders", "--wait=true", "--timeout=180s"]);
      await eventually(
        "the deleted connection's flow to leave the gateway's filter",
        () => !gatewayFlows().includes(pgClusterIp) && gatewayFlows().includes(pgPodIp),
        120_000,
      );
      await eventually(
        "its forwarder to stop (the agent says so)",
        () => /forwarder :5432 -> \S+ stopped/.test(tunnelLogs()),
        60_000,
      );
      const refused = psqlFromConsumer(wg.clientHost, 5432);
      assert.notEqual(refused, "42");
      const kept = psqlFromConsumer(wg.clientHost, FORWARDER_FALLBACK_PORT);
      assert.equal(kept, "42", `${kept}\n${tunnelDiagnosis()}`);
      // The client's tunnel container (root, NET_ADMIN) routes the removed host into the tunnel
      // by hand: the gateway's filter drops it, while the listed host still answers.
      const exec = (cmd: string) =>
        kubectlTry(kc(), ["-n", WG_APP_NS, "exec", clientPod(), "-c", "wireguard", "--", "sh", "-c", cmd]);
      const peer = exec("wg show wg0 peers").stdout.trim();
      const widened = exec(
        `ips="$(wg show wg0 allowed-ips | { read -r p ips; echo "$ips"; })"; list=""; for a in $ips ${pgClusterIp}/32; do list="\${list:+$list,}$a"; done; wg set wg0 peer ${peer} allowed-ips "$list" && ip route replace ${pgClusterIp}/32 dev wg0`,
      );
      assert.equal(widened.status, 0, widened.stderr);
      const off = exec(`socat -u /dev/null TCP:${pgClusterIp}:5432,connect-timeout=3`);
      assert.notEqual(off.status, 0, "a host off the list is refused");
      const on = exec(`socat -u /dev/null TCP:${pgPodIp}:5432,connect-timeout=3`);
      assert.equal(on.status, 0, `the listed host answers: ${on.stderr}`);
    });

    it("deleting the group's last connection takes its keys out of the flows ConfigMap (the patch's field manager lets go); the environment's fields stay", async () => {
      kubectl(kc(), ["-n", WG_NS, "delete", "tcpconnection", "--all", "--wait=true", "--timeout=180s"]);
      const flows = () =>
        kubectlJson<{ data?: Record<string, string>; metadata: { labels?: Record<string, string> } }>(kc(), [
          "-n",
          PROXY_NS,
          "get",
          "configmap",
          wg.flows.name,
        ]);
      await eventually(
        "the group's keys to leave the flows ConfigMap",
        () => Object.keys(flows().data ?? {}).length === 0,
        120_000,
      );
      assert.equal(flows().metadata.labels?.["app.kubernetes.io/name"], "klutch-wireguard");
      await eventually(
        "the client's last forwarder to stop",
        () => new RegExp(`forwarder :${FORWARDER_FALLBACK_PORT} -> \\S+ stopped`).test(tunnelLogs()),
        60_000,
      );
    });
  });

  describe("the proxy's kernel hop: kube-proxy alone between consumer and instance, endpoints followed by the bridge pod", () => {
    const K_NS = "team-k";
    const kernelService = `np-${K_NS}-proxy`;
    const DATA_PLANE_SA = `system:serviceaccount:${PROXY_NS}:klutch-proxies`;
    const psqlFromConsumer = (host: string, port: number) => psqlFromPod(host, port, K_NS, "consumer");
    const mirrored = () =>
      kubectlJson<{ items: { endpoints?: { addresses: string[] }[]; ports: { port: number }[] }[] }>(kc(), [
        "-n",
        PROXY_NS,
        "get",
        "endpointslices",
        "-l",
        `kubernetes.io/service-name=${kernelService}`,
      ]).items;
    const mirroredAddresses = () =>
      mirrored().flatMap((s) => (s.endpoints ?? []).flatMap((e) => e.addresses));
    const pgPodIps = () => pods(NS, "app=pg").map((p) => (p.status as { podIP?: string }).podIP ?? "");
    let ready: Claim;
    /** The settings ConfigMap as the environment writes it for team-k's kernel hop. */
    const kernelSettings = (
      serviceType: "ClusterIP" | "NodePort",
      portRange: { from: number; to: number },
      exposure: { sourceRanges: string[]; internal: boolean; public: boolean },
    ) => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: SETTINGS_CONFIGMAP, namespace: PROXY_NS },
      data: {
        [SETTINGS_KEY]: renderBridgeSettings({
          version: 1,
          consumers: {
            [K_NS]: {
              appCluster: "app-k",
              implementation: "proxy",
              proxy: {
                serviceType,
                portRange: { from: portRange.from, to: portRange.to },
                hop: "kernel",
                exposure,
              },
            },
          },
        }),
      },
    });

    it("with the environment's settings for the kernel hop and the data-plane identity's instance reads (dataPlaneInstanceRules), a claim becomes Ready at a selector-less Service whose EndpointSlice names the PostgreSQL pod; psql from a consumer pod goes through it; no proxy pod runs", async () => {
      kubectl(kc(), ["create", "namespace", K_NS]);
      // What BridgeDataPlane grants where an app cluster uses the kernel hop: the instance reads
      // (granted since the bridge was deployed, as for every proxy environment), and in the
      // proxies' namespace its Role, in place of the admin role the identity had so far: from
      // here on the bridge works with the product's rules only.
      for (const doc of [
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "Role",
          metadata: { name: "klutch-bridge-proxies", namespace: PROXY_NS },
          rules: dataPlaneRules(true),
        },
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "RoleBinding",
          metadata: { name: "klutch-bridge-proxies", namespace: PROXY_NS },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "klutch-bridge-proxies" },
          subjects: [{ kind: "ServiceAccount", name: "klutch-proxies", namespace: PROXY_NS }],
        },
        postgresDeployment({
          name: "consumer",
          namespace: K_NS,
          image: node.images.postgres,
          password: pgPassword,
          clientPassword: true,
        }),
        kernelSettings("ClusterIP", KERNEL_PORTS, { sourceRanges: [], internal: true, public: false }),
      ]) {
        const r = kubectlApply(kc(), JSON.stringify(doc));
        assert.equal(r.status, 0, r.stderr);
      }
      kubectl(kc(), ["-n", PROXY_NS, "delete", "rolebinding", "klutch-proxies"]);
      await eventually(
        "the consumer pod to be Ready",
        () => pods(K_NS, "app=consumer").some(podReady),
        180_000,
      );

      const applied = Date.now();
      assert.equal(kubectlApply(kc(), claimYaml("k-orders", K_NS, 5432, pgHost)).status, 0);
      ready = await waitForClaim(kc(), K_NS, "k-orders", {
        timeoutMs: 300_000,
        diagnose: () => `${claimDiagnosis(kc(), K_NS, "k-orders", crossplane?.logFile)}\n${bridgeLogs()}`,
      });
      process.stdout.write(
        `      kernel-hop claim applied → Ready through the bridge pod: ${((Date.now() - applied) / 1000).toFixed(1)} s\n`,
      );
      assert.equal(ready.status?.hostForConsumer, `${kernelService}.${PROXY_NS}.svc.cluster.local`);
      assert.ok(
        ready.status.port! >= KERNEL_PORTS.from && ready.status.port! <= KERNEL_PORTS.to,
        `port ${ready.status?.port}`,
      );
      const svc = kubectlJson<{ spec: { selector?: Record<string, string>; type: string } }>(kc(), [
        "-n",
        PROXY_NS,
        "get",
        "service",
        kernelService,
      ]);
      assert.equal(svc.spec.selector, undefined, "the kernel path's Service selects no pods");
      assert.equal(svc.spec.type, "ClusterIP");
      assert.deepEqual(mirroredAddresses(), pgPodIps());
      assert.equal(
        kubectlTry(kc(), ["-n", PROXY_NS, "get", "deployment", kernelService]).status,
        1,
        "no HAProxy Deployment for a kernel-hop group",
      );
      assert.equal(psqlFromConsumer(ready.status.hostForConsumer, ready.status.port!), "42");
    });

    it("the PostgreSQL pod replaced (a new address): the bridge pod sees the endpoints move (or the path refuse), runs the group again, and psql works through the same host and port", async () => {
      const [old] = pgPodIps();
      const [victim] = pods(NS, "app=pg");
      const deleted = Date.now();
      kubectl(kc(), ["-n", NS, "delete", "pod", victim!.metadata.name, "--wait=false"]);
      await eventually(
        "the mirrored EndpointSlice to name the new PostgreSQL pod",
        () => {
          const now = pgPodIps();
          const list = mirroredAddresses();
          return now.length === 1 && now[0] !== old && list.length === 1 && list[0] === now[0];
        },
        240_000,
      ).catch((e: Error) => {
        throw new Error(`${e.message}\nmirrored: ${JSON.stringify(mirrored())}\n${bridgeLogs()}`);
      });
      process.stdout.write(
        `      PostgreSQL pod deleted → the kernel path names its successor: ${((Date.now() - deleted) / 1000).toFixed(1)} s\n`,
      );
      // Whichever poll sees it first runs the group again: the endpoints' (they moved) or the
      // health's (the dial through the path is refused while it still names the old pod); the
      // run reads the new endpoints either way.
      assert.match(bridgeLogs(), /instance endpoints moved|a path's health changed/);
      await eventually(
        "psql through the kernel path to the new pod",
        () => psqlFromConsumer(ready.status!.hostForConsumer!, ready.status!.port!) === "42",
        120_000,
      );
      const after = claimsIn(kc(), K_NS).find((c) => c.metadata.name === "k-orders");
      assert.equal(after?.status?.port, ready.status?.port, "the path keeps its port");
    });

    it("the environment makes it a NodePort marked public (what validation allows a kernel hop): with no path changed, the bridge sees the settings move and the path moves to a node port and a node's address (the product's node reads); psql reaches it from outside the cluster and from the pod", async () => {
      for (const doc of [
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRole",
          metadata: { name: "klutch-bridge-proxies:nodes" },
          rules: dataPlaneNodeRules(),
        },
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRoleBinding",
          metadata: { name: "klutch-bridge-proxies:nodes" },
          roleRef: {
            apiGroup: "rbac.authorization.k8s.io",
            kind: "ClusterRole",
            name: "klutch-bridge-proxies:nodes",
          },
          subjects: [{ kind: "ServiceAccount", name: "klutch-proxies", namespace: PROXY_NS }],
        },
        kernelSettings("NodePort", KERNEL_NODE_PORTS, {
          sourceRanges: ["0.0.0.0/0"],
          internal: false,
          public: true,
        }),
      ]) {
        const r = kubectlApply(kc(), JSON.stringify(doc));
        assert.equal(r.status, 0, r.stderr);
      }
      // No path changes: the bridge's settings poll (every 10 s) sees the group's settings moved.
      const changed = Date.now();
      ready = await waitForClaim(kc(), K_NS, "k-orders", {
        what: "the kernel path to report a node port and the node's address",
        check: (c) =>
          isClaimReady(c) &&
          c!.status!.port! >= KERNEL_NODE_PORTS.from &&
          c!.status!.port! <= KERNEL_NODE_PORTS.to &&
          c!.status!.hostForConsumer === node.nodeAddress,
        timeoutMs: 180_000,
        diagnose: (last) => `${JSON.stringify(last?.status)}\n${bridgeLogs()}`,
      });
      process.stdout.write(
        `      settings changed → the path reports its node port: ${((Date.now() - changed) / 1000).toFixed(1)} s\n`,
      );
      // Either watch may start the run that moves the path: the settings poll (every 10 s) or the
      // health poll (every 2 s), when the move also changes what the group's data path says first.
      // Every run reads the settings before it starts, so whichever starts it runs with the new ones
      // and the settings poll then finds nothing moved; the status above is what proves the move.
      assert.match(
        bridgeLogs(),
        /the environment changed these groups' settings; running them again|a path's health changed/,
      );
      const svc = kubectlJson<{
        metadata: { annotations?: Record<string, string> };
        spec: { type: string; externalTrafficPolicy?: string; ports: { port: number; nodePort?: number }[] };
      }>(kc(), ["-n", PROXY_NS, "get", "service", kernelService]);
      assert.equal(svc.spec.type, "NodePort");
      assert.equal(svc.spec.externalTrafficPolicy, "Cluster", "mirrored endpoints belong to no node");
      assert.equal(svc.metadata.annotations?.["klutch.anynines.com/public-endpoint"], "true");
      assert.equal(svc.spec.ports.find((p) => p.port === ready.status!.port)?.nodePort, ready.status!.port);
      assert.equal(psqlFromHost(ready.status!.port!), "42");
      assert.equal(psqlFromConsumer(ready.status!.hostForConsumer!, ready.status!.port!), "42");
    });

    it("a claim whose host the kernel hop cannot follow says why (HostUnresolved) and leaves the group's working path alone", async () => {
      assert.equal(kubectlApply(kc(), claimYaml("k-external", K_NS, 5432, "db.example.com")).status, 0);
      await eventually(
        "a HostUnresolved event naming the host",
        () =>
          kubectlJson<{ items: { message: string }[] }>(kc(), [
            "get",
            "events",
            "-A",
            "--field-selector",
            "reason=HostUnresolved",
          ]).items.some((e) => e.message.includes('"db.example.com"')),
        180_000,
      ).catch((e: Error) => {
        throw new Error(`${e.message}\n${bridgeLogs()}`);
      });
      const bad = claimsIn(kc(), K_NS).find((c) => c.metadata.name === "k-external");
      assert.ok(!isClaimReady(bad), JSON.stringify(bad?.status));
      assert.equal(psqlFromConsumer(ready.status!.hostForConsumer!, ready.status!.port!), "42");
    });

    it("the data-plane identity (the product's rules only) may read Services and list EndpointSlices anywhere and write EndpointSlices in its own namespace, no more: no Secrets, no writes elsewhere", () => {
      const can = (...args: string[]) =>
        kubectlTry(kc(), ["auth", "can-i", ...args, `--as=${DATA_PLANE_SA}`]).stdout.trim();
      assert.equal(can("get", "services", "-n", NS), "yes");
      // Listed by name from the watch cache by the haproxy hop's health reader (instance-serving.ts).
      assert.equal(can("list", "services", "-n", NS), "yes");
      assert.equal(can("list", "endpointslices.discovery.k8s.io", "-n", NS), "yes");
      // programs/bridge/instance-watch.ts: one watch of the controller's slices in every namespace.
      assert.equal(can("watch", "endpointslices.discovery.k8s.io", "-A"), "yes");
      assert.equal(can("watch", "services", "-n", NS), "no");
      assert.equal(can("get", "secrets", "-n", NS), "no");
      assert.equal(can("create", "services", "-n", NS), "no");
      assert.equal(can("create", "endpointslices.discovery.k8s.io", "-n", NS), "no");
      assert.equal(can("create", "endpointslices.discovery.k8s.io", "-n", PROXY_NS), "yes");
      assert.equal(can("delete", "endpointslices.discovery.k8s.io", "-n", PROXY_NS), "yes");
    });

    it("deleting the claims releases the path: its Service and EndpointSlices go", async () => {
      kubectl(kc(), ["-n", K_NS, "delete", "tcpconnection", "--all", "--wait=true", "--timeout=180s"]);
      await eventually(
        "the kernel path's Service and EndpointSlices to go",
        () =>
          kubectlTry(kc(), ["-n", PROXY_NS, "get", "service", kernelService]).status === 1 &&
          mirrored().length === 0,
        120_000,
      );
    });
  });
});
