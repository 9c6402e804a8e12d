import { readTunables, SAVED_TUNABLES_FILE } from "../../host/local-clusters/node/kernel-tunables";
import { otherKubeletRunning } from "../../host/local-clusters/node/node";
import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import * as os from "node:os";
import * as path from "node:path";
import { LocalClusters, type ClusterInfo, type NodeInfo } from "../../host/local-clusters";
import { cgroupPids, mountsUnder } from "../../host/local-clusters/node/host";
import { renderHaproxyConfig } from "../../network/proxy/model/haproxy-config";
import { NODE_COMPONENTS } from "../../host/local-clusters/node/layout";
import { pinnedVersion } from "../../host/toolchain/support-windows";
import { postgresDeployment } from "../helpers/node-postgres";
import { livePods, podReady, type Pod } from "../helpers/kube-objects";
import { gone } from "../helpers/processes";
import { eventually, kubectl, kubectlApply, kubectlJson, kubectlTry } from "../helpers/kubectl";

const CLUSTER = "node-e2e";
const NS = "default";

/** GET over plain HTTP: only ever to the node's own address, on the link this test's `up` made. */
function httpGet(url: string, timeoutMs = 3_000): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { timeout: timeoutMs, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
  });
}

/** Pids of containerd shims serving this node (their argv names its containerd socket). */
function shimPids(socket: string): number[] {
  return fs
    .readdirSync("/proc")
    .filter((e) => /^\d+$/.test(e))
    .map(Number)
    .filter((pid) => {
      try {
        const argv = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
        return path.basename(argv[0] ?? "").startsWith("containerd-shim") && argv.includes(socket);
      } catch {
        return false;
      }
    });
}

// Two HAProxy configs from the local image: `echo` answers HTTP with its pod name; `prober`
// health-checks the echo Service's ClusterIP and is Ready only while that works, so its
// readiness proves pod → ClusterIP traffic through kube-proxy's rules.
const ECHO_CFG = `global
  log stdout format raw local0
defaults
  mode http
  timeout connect 2s
  timeout client 10s
  timeout server 10s
frontend health
  bind :8405
  monitor-uri /healthz
frontend web
  bind :8080
  http-request return status 200 content-type text/plain string "hello from \${POD_NAME}"
`;

const proberCfg = (clusterIp: string) => `global
  log stdout format raw local0
defaults
  mode http
  timeout connect 2s
  timeout client 10s
  timeout server 10s
backend echo
  option httpchk GET /
  server echo ${clusterIp}:8080 check inter 1s fall 2 rise 1
frontend health
  bind :8405
  monitor-uri /healthz
  monitor fail if { nbsrv(echo) lt 1 }
`;

function deployment(name: string, image: string, configMap: string, replicas = 1): string {
  return JSON.stringify({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: NS },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: {
          automountServiceAccountToken: false,
          terminationGracePeriodSeconds: 2,
          // The TcpProxy component's security settings, so the local image is checked against them.
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 99,
            runAsGroup: 99,
            seccompProfile: { type: "RuntimeDefault" },
          },
          containers: [
            {
              name: "haproxy",
              image,
              imagePullPolicy: "Never",
              command: ["haproxy"],
              args: ["-f", "/usr/local/etc/haproxy/haproxy.cfg", "-db"],
              env: [{ name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } }],
              ports: [
                { name: "web", containerPort: 8080 },
                { name: "health", containerPort: 8405 },
              ],
              readinessProbe: {
                httpGet: { path: "/healthz", port: 8405 },
                periodSeconds: 2,
                failureThreshold: 2,
              },
              livenessProbe: { httpGet: { path: "/healthz", port: 8405 }, periodSeconds: 5 },
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ["ALL"] },
              },
              volumeMounts: [{ name: "config", mountPath: "/usr/local/etc/haproxy", readOnly: true }],
            },
          ],
          volumes: [{ name: "config", configMap: { name: configMap } }],
        },
      },
    },
  });
}

const configMap = (name: string, cfg: string) =>
  JSON.stringify({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name, namespace: NS },
    data: { "haproxy.cfg": cfg },
  });

/**
 * A local cluster with a real node, end to end: containerd, kubelet, kube-proxy and
 * kube-scheduler from the toolchain; images built here; pods that really run and pass their
 * probes; Services through kube-proxy; crash recovery by `up`; and a `down` that leaves
 * nothing behind.
 */
describe("local cluster with a node (e2e)", function () {
  this.timeout(10 * 60_000);

  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-node-"));
  const clusters = new LocalClusters(stateDir);
  const kc = () => clusters.kubeconfigPath(CLUSTER);
  const request = [{ name: CLUSTER, nodes: 1 }];
  let info: ClusterInfo;
  let node: NodeInfo;
  let nodePort = 0;
  let clusterIp = "";

  const pods = (app: string) => livePods(kc(), NS, `app=${app}`);
  const allReady = (app: string, count = 1) => {
    const list = pods(app);
    return list.length === count && list.every(podReady);
  };
  const viaNodePort = () => httpGet(`http://${node.nodeAddress}:${nodePort}/`);

  let hostTunables: Record<string, string>;
  /** The host's own values: saved by a node that already runs (a test beside this one), else read. */
  const savedOrCurrent = () =>
    fs.existsSync(SAVED_TUNABLES_FILE)
      ? (JSON.parse(fs.readFileSync(SAVED_TUNABLES_FILE, "utf8")) as Record<string, string>)
      : readTunables();
  before(async () => {
    hostTunables = savedOrCurrent();
    const [first] = await clusters.up(request);
    assert.ok(first?.node, "the cluster has a node");
    info = first;
    node = first.node;
  });

  after(async () => {
    await clusters.down();
    fs.rmSync(stateDir, { recursive: true, force: true });
  });

  it("starts a node that shows Ready, on its own address, with the pinned kubelet and Debian's containerd", () => {
    // The kubelet rewrites these on the host (kernel-tunables.ts); `down` must put them back.
    assert.equal(readTunables()["kernel.panic"], "10", "the kubelet set kernel.panic while the node runs");
    const nodes = kubectlJson<{
      items: {
        metadata: { name: string };
        status: {
          conditions: { type: string; status: string }[];
          addresses: { type: string; address: string }[];
          nodeInfo: { kubeletVersion: string; kubeProxyVersion: string; containerRuntimeVersion: string };
        };
      }[];
    }>(kc(), ["get", "nodes"]).items;
    assert.deepEqual(
      nodes.map((n) => n.metadata.name),
      [`${CLUSTER}-node`],
    );
    const [n] = nodes;
    assert.ok(n);
    assert.equal(n.status.conditions.find((c) => c.type === "Ready")?.status, "True");
    assert.deepEqual(
      n.status.addresses.find((a) => a.type === "InternalIP"),
      { type: "InternalIP", address: node.nodeAddress },
    );
    assert.equal(n.status.nodeInfo.kubeletVersion, `v${pinnedVersion({ env: "KUBERNETES_VERSION" })}`);
    assert.match(n.status.nodeInfo.containerRuntimeVersion, /^containerd:\/\/1\.6\./);
    assert.match(node.nodeAddress, /^172\.30\.\d+\.\d+$/);
    assert.ok(node.readySeconds > 0);
    process.stdout.write(`      node Ready ${node.readySeconds}s after containerd started\n`);
  });

  it("runs a Deployment of the locally built HAProxy image to Ready, probes passing", async () => {
    await eventually(
      "the default service account",
      () => kubectlTry(kc(), ["get", "sa", "default", "-n", NS]).status === 0,
    );
    for (const doc of [
      configMap("echo", ECHO_CFG),
      deployment("echo", node.images.haproxy as string, "echo"),
      JSON.stringify({
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "echo", namespace: NS },
        spec: {
          type: "NodePort",
          selector: { app: "echo" },
          ports: [{ name: "web", port: 8080, targetPort: 8080 }],
        },
      }),
    ]) {
      const r = kubectlApply(kc(), doc);
      assert.equal(r.status, 0, r.stderr);
    }
    await eventually("the echo pod to be Ready", () => allReady("echo"), 120_000);
    const [pod] = pods("echo");
    assert.ok(pod);
    assert.deepEqual(
      pod.status.containerStatuses?.map((c) => [c.ready, c.restartCount]),
      [[true, 0]],
    );
    assert.ok(
      pod.status.podIP?.startsWith("10.244.0."),
      `pod IP ${pod.status.podIP} from the node's pod CIDR`,
    );
  });

  it("serves the Service on its ClusterIP (from the node and from a pod) and on its NodePort from the host", async () => {
    const svc = kubectlJson<{ spec: { clusterIP: string; ports: { nodePort: number }[] } }>(kc(), [
      "get",
      "service",
      "echo",
      "-n",
      NS,
    ]);
    clusterIp = svc.spec.clusterIP;
    nodePort = svc.spec.ports[0]?.nodePort ?? 0;
    const [pod] = pods("echo");

    const fromNode = execFileSync(
      "nsenter",
      [`--net=/run/netns/${node.netns}`, "curl", "-s", "--max-time", "5", `http://${clusterIp}:8080/`],
      { encoding: "utf8" },
    );
    assert.equal(fromNode, `hello from ${pod?.metadata.name}`);

    await eventually(
      "the NodePort to answer from the host",
      async () =>
        (await viaNodePort().catch(() => ({ body: "" }))).body === `hello from ${pod?.metadata.name}`,
      30_000,
    );

    // From a pod: the prober is Ready only while its health checks through the ClusterIP pass.
    for (const doc of [
      configMap("prober", proberCfg(clusterIp)),
      deployment("prober", node.images.haproxy as string, "prober"),
    ]) {
      const r = kubectlApply(kc(), doc);
      assert.equal(r.status, 0, r.stderr);
    }
    await eventually("the prober to be Ready (pod → ClusterIP works)", () => allReady("prober"), 120_000);
  });

  it("reaches the kubelet through the API server (kubectl logs)", () => {
    const [pod] = pods("echo");
    const r = kubectlTry(kc(), ["logs", "-n", NS, pod?.metadata.name ?? "", "--tail=5"]);
    assert.equal(r.status, 0, r.stderr);
  });

  it("runs PostgreSQL from the local image (exec readiness probe); psql reaches it via NodePort and through an HAProxy pod with the TcpProxy config", async () => {
    const password = "node-e2e-only";
    const pg = postgresDeployment({ name: "pg", namespace: NS, image: node.images.postgres, password });
    const service = (name: string, port: number) =>
      JSON.stringify({
        apiVersion: "v1",
        kind: "Service",
        metadata: { name, namespace: NS },
        spec: { type: "NodePort", selector: { app: name }, ports: [{ port, targetPort: port }] },
      });
    for (const doc of [JSON.stringify(pg), service("pg", 5432)]) {
      const r = kubectlApply(kc(), doc);
      assert.equal(r.status, 0, r.stderr);
    }
    await eventually("PostgreSQL to be Ready (pg_isready passing)", () => allReady("pg"), 120_000);
    const pgSvc = kubectlJson<{ spec: { clusterIP: string; ports: { nodePort: number }[] } }>(kc(), [
      "get",
      "service",
      "pg",
      "-n",
      NS,
    ]);

    // The proxy pod runs exactly what the TcpProxy component renders for one connection, to an
    // instance named by its Service's DNS name: HAProxy resolves it at start through the
    // cluster DNS (it refuses to start on a name that does not resolve).
    const cfg = renderHaproxyConfig(
      [{ id: "default/pg", instanceHost: `pg.${NS}.svc.cluster.local`, port: 5432 }],
      { "default/pg": 15432 },
    );
    for (const doc of [
      configMap("pgproxy", cfg),
      deployment("pgproxy", node.images.haproxy as string, "pgproxy"),
      service("pgproxy", 15432),
    ]) {
      const r = kubectlApply(kc(), doc);
      assert.equal(r.status, 0, r.stderr);
    }
    await eventually("the proxy pod to be Ready", () => allReady("pgproxy"), 120_000);
    const proxySvc = kubectlJson<{ spec: { ports: { nodePort: number }[] } }>(kc(), [
      "get",
      "service",
      "pgproxy",
      "-n",
      NS,
    ]);

    const psql = (port: number) =>
      execFileSync(
        "psql",
        [
          `host=${node.nodeAddress} port=${port} user=postgres dbname=postgres connect_timeout=5`,
          "-tAc",
          "select 6 * 7",
        ],
        {
          encoding: "utf8",
          env: { ...process.env, PGPASSWORD: password },
          stdio: ["ignore", "pipe", "pipe"],
        },
      ).trim();
    await eventually(
      "psql through the PostgreSQL NodePort",
      () => {
        try {
          return psql(pgSvc.spec.ports[0]?.nodePort ?? 0) === "42";
        } catch {
          return false;
        }
      },
      30_000,
    );
    await eventually(
      "psql through the proxy pod's NodePort",
      () => {
        try {
          return psql(proxySvc.spec.ports[0]?.nodePort ?? 0) === "42";
        } catch {
          return false;
        }
      },
      30_000,
    );
  });

  it("resolves Service names through the node's cluster DNS (CoreDNS), and nothing outside the cluster domain", () => {
    const dns = kubectlJson<{ spec: { clusterIP: string } }>(kc(), [
      "get",
      "service",
      "kube-dns",
      "-n",
      "kube-system",
    ]);
    assert.equal(dns.spec.clusterIP, "10.96.0.10");
    const [pg] = pods("pg");
    assert.ok(pg);
    const exec = (conninfo: string) =>
      kubectlTry(kc(), ["exec", "-n", NS, pg.metadata.name, "--", "psql", conninfo, "-tAc", "select 6 * 7"]);
    // What a consumer pod does with a ClusterIP proxy's hostForConsumer: dial the Service's name.
    const viaName = exec(
      `host=pgproxy.${NS}.svc.cluster.local port=15432 user=postgres dbname=postgres password=node-e2e-only connect_timeout=5`,
    );
    assert.equal(viaName.status, 0, viaName.stderr);
    assert.equal(viaName.stdout.trim(), "42");
    // The search path of the pod's namespace, as in-cluster clients use it.
    const short = exec(
      "host=pgproxy port=15432 user=postgres dbname=postgres password=node-e2e-only connect_timeout=5",
    );
    assert.equal(short.stdout.trim(), "42", short.stderr);
    // Names outside the cluster domain are not forwarded anywhere: they do not resolve.
    const outside = exec("host=db.example.invalid port=5432 user=postgres connect_timeout=5");
    assert.notEqual(outside.status, 0);
    assert.match(outside.stderr, /could not translate host name "db\.example\.invalid"/);
  });

  it("replaces a deleted pod, and the Service follows it", async () => {
    const [old] = pods("echo");
    assert.ok(old);
    kubectl(kc(), ["delete", "pod", "-n", NS, old.metadata.name, "--wait=false"]);
    await eventually(
      "a new echo pod to be Ready",
      () => {
        const list = pods("echo");
        return list.length === 1 && list[0]?.metadata.name !== old.metadata.name && podReady(list[0] as Pod);
      },
      120_000,
    );
    const [fresh] = pods("echo");
    await eventually(
      "the NodePort to reach the new pod",
      async () =>
        (await viaNodePort().catch(() => ({ body: "" }))).body === `hello from ${fresh?.metadata.name}`,
      30_000,
    );
  });

  it("leaves a healthy node alone on a second `up`", async () => {
    const [again] = await clusters.up(request);
    assert.equal(again?.started, false);
    assert.equal(again?.node?.started, false);
    assert.deepEqual(again?.node?.pids, node.pids);
  });

  for (const victim of ["kubelet", "containerd"] as const) {
    it(`recovers from a killed ${victim} on \`up\`: node Ready, pods Ready, Service answering`, async () => {
      const status = (await clusters.status()).find((s) => s.name === CLUSTER);
      const pid = status?.node?.components[victim].pid;
      assert.ok(pid);
      process.kill(pid, "SIGKILL");
      await eventually(`${victim} to die`, () => gone(pid), 10_000);
      assert.equal((await clusters.status()).find((s) => s.name === CLUSTER)?.healthy, false);

      const start = Date.now();
      const [again] = await clusters.up(request);
      assert.equal(again?.node?.started, true);
      assert.ok(again?.node);
      node = again.node;
      await eventually("echo and prober Ready again", () => allReady("echo") && allReady("prober"), 120_000);
      const [pod] = pods("echo");
      await eventually(
        "the NodePort to answer again",
        async () =>
          (await viaNodePort().catch(() => ({ body: "" }))).body === `hello from ${pod?.metadata.name}`,
        30_000,
      );
      process.stdout.write(`      recovered in ${Math.round((Date.now() - start) / 1000)}s\n`);
    });
  }

  it("stops and removes the node when the cluster no longer asks for one, and starts it again when it does", async () => {
    const pids = Object.values(node.pids);
    const [without] = await clusters.up([{ name: CLUSTER, nodes: 0 }]);
    assert.equal(without?.node, undefined);
    assert.deepEqual(
      pids.filter((p) => !gone(p)),
      [],
      "node processes still alive",
    );
    assert.equal(
      kubectlTry(kc(), ["get", "node", `${CLUSTER}-node`]).status,
      1,
      "the Node object is deleted",
    );
    assert.ok(!fs.existsSync(`/run/netns/${node.netns}`));
    assert.equal(
      kubectlTry(kc(), ["get", "deployment", "coredns", "-n", "kube-system"]).status,
      1,
      "no cluster DNS is left waiting for a node",
    );
    assert.equal((await clusters.status()).find((s) => s.name === CLUSTER)?.healthy, true);

    const [again] = await clusters.up(request);
    assert.equal(again?.node?.started, true);
    assert.ok(again?.node);
    node = again.node;
    await eventually(
      "echo and prober Ready on the new node",
      () => allReady("echo") && allReady("prober"),
      120_000,
    );
  });

  it("`down` leaves no node process, pod, mount, namespace or cgroup behind", async () => {
    const layoutDir = path.join(stateDir, CLUSTER, "node");
    const socket = path.join(layoutDir, "containerd", "containerd.sock");
    const status = (await clusters.status()).find((s) => s.name === CLUSTER);
    const nodePids = NODE_COMPONENTS.map((c) => status?.node?.components[c].pid ?? 0);
    assert.ok(nodePids.every((p) => p > 0 && !gone(p)));
    const shims = shimPids(socket);
    const cgroup = `/klutch-${node.netns.replace(/^klutch-/, "")}`;
    const podProcesses = cgroupPids(cgroup);
    assert.ok(shims.length >= 2, `shims running: ${shims.join(",")}`);
    assert.ok(podProcesses.length >= 4, `pod processes (pause + haproxy per pod): ${podProcesses.join(",")}`);
    assert.ok(mountsUnder(layoutDir).length > 0, "the node has mounts while it runs");

    await clusters.down();

    const all = [...nodePids, ...shims, ...podProcesses, ...Object.values(info.pids)];
    assert.deepEqual(
      all.filter((p) => !gone(p)),
      [],
      "processes still alive",
    );
    assert.deepEqual(shimPids(socket), []);
    assert.deepEqual(clusters.leftoverProcesses(), []);
    if (otherKubeletRunning())
      // Another local node (a test running beside this one) still needs them: they stay saved
      // until the last node stops.
      assert.deepEqual(
        savedOrCurrent(),
        hostTunables,
        "the host's kernel settings stay saved for the last node",
      );
    else
      assert.deepEqual(
        readTunables(),
        hostTunables,
        "the kubelet's kernel settings are undone (kernel.panic …)",
      );
    assert.deepEqual(cgroupPids(cgroup), []);
    assert.ok(!fs.existsSync(`/sys/fs/cgroup/memory${cgroup}`), "the node's cgroup is removed");
    assert.deepEqual(mountsUnder(stateDir), [], "no mount left under the state dir");
    assert.ok(!fs.existsSync(`/run/netns/${node.netns}`), "the node's network namespace is gone");
    const links = execFileSync("ip", ["-o", "link", "show"], { encoding: "utf8" });
    assert.ok(
      !links.includes(`kn${node.netns.replace(/^klutch-/, "")}`),
      "the host end of the node's link is gone",
    );
    const mentions = (dir: string) =>
      fs.readdirSync(dir).filter((f) => {
        try {
          const file = path.join(dir, f);
          return fs.lstatSync(file).isSymbolicLink()
            ? fs.readlinkSync(file).startsWith(stateDir)
            : fs.readFileSync(file, "utf8").includes(stateDir);
        } catch {
          return false;
        }
      });
    if (fs.existsSync("/var/lib/cni/results"))
      assert.deepEqual(mentions("/var/lib/cni/results"), [], "CNI cache entries of the node's pods");
    if (fs.existsSync("/var/log/containers"))
      assert.deepEqual(mentions("/var/log/containers"), [], "kubelet's log links into the node");
    const tables = execFileSync("nft", ["list", "tables"], { encoding: "utf8" });
    assert.ok(
      !tables.includes(`klutch-node-${node.netns.replace(/^klutch-/, "")}`),
      "the host's nft table is gone",
    );
  });
});
