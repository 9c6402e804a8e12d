import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { LocalClusters, type NodeInfo } from "../../host/local-clusters";
import { generateWireguardKeyPair } from "../../network/wireguard/model/keys";
import { planWireguard, type WireguardPlan } from "../../network/wireguard/model/planner";
import {
  renderClientManifests,
  renderGatewayManifests,
  renderGatewayService,
  type ClientManifests,
  type GatewayManifests,
  type K8sRenderOptions,
} from "../../network/wireguard/model/render-k8s";
import { NFT_TABLE } from "../../network/wireguard/model/render-nftables";
import {
  renderClientWgQuick,
  renderGatewaySetconf,
  renderGatewayWgQuick,
} from "../../network/wireguard/model/render-wg-quick";
import { postgresDeployment } from "../helpers/node-postgres";
import { livePods, podDiagnosis, podReady, type Pod } from "../helpers/kube-objects";
import * as k8s from "@pulumi/kubernetes";
import { WireguardTunnel } from "../../network/wireguard/wireguard-tunnel";
import { inlineStack } from "../helpers/inline-stack";
import { eventually, kubectlApply, kubectlJson, kubectlTry } from "../helpers/kubectl";

/**
 * The rendered WireGuard pods (network/wireguard/model/render-k8s.ts) on a local cluster with a real
 * node: the gateway in the data-service namespace next to a PostgreSQL pod, the client in the
 * app side's namespace, both from the locally built klutch.local/wireguard image, with exactly
 * the privileges the renderer asks for. One cluster plays both sides (two namespaces): the
 * client still reaches PostgreSQL only through the tunnel, since its routes send the instance
 * host into wg0 and PostgreSQL sees the gateway's address.
 */

const CLUSTER = "wg-pods";
const DATA_NS = "klutch-network";
const APP_NS = "klutch-wireguard";
const PASSWORD = "wireguard-pods-e2e-only";
const APP = "app";

describe("WireGuard as the rendered pods on a node-backed local cluster (e2e)", function () {
  this.timeout(15 * 60_000);

  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-wg-pods-"));
  const clusters = new LocalClusters(stateDir);
  const kc = () => clusters.kubeconfigPath(CLUSTER);
  let node: NodeInfo;
  let pgHost = "";
  let plan: WireguardPlan;
  let gateway: GatewayManifests;
  let client: ClientManifests;
  const gatewayKeys = generateWireguardKeyPair();
  const clientKeys = generateWireguardKeyPair();
  let setupSeconds = 0;

  const apply = (doc: unknown) => {
    const r = kubectlApply(kc(), JSON.stringify(doc));
    assert.equal(r.status, 0, r.stderr);
  };
  const pods = (ns: string, selector: string) => livePods(kc(), ns, selector);
  const onePod = (ns: string, selector: string): Pod => {
    const [p] = pods(ns, selector);
    assert.ok(p, `a pod ${selector} in ${ns}`);
    return p;
  };
  const untilReady = (ns: string, component: string) =>
    eventually(
      `the ${component} pod to be Ready`,
      () => pods(ns, `app.kubernetes.io/component=${component}`).some(podReady),
      180_000,
    );
  const gatewayPod = () => onePod(DATA_NS, "app.kubernetes.io/component=gateway");
  const clientPod = () => onePod(APP_NS, "app.kubernetes.io/component=client");
  const exec = (ns: string, pod: Pod, container: string, argv: string[]) =>
    kubectlTry(kc(), ["exec", "-n", ns, pod.metadata.name, "-c", container, "--", ...argv]);
  /** A TCP connect from inside the client pod (socat, as the forwarders dial): true when it connects. */
  const connects = (ns: string, pod: Pod, host: string, port: number) =>
    exec(ns, pod, "wireguard", ["socat", "-u", "OPEN:/dev/null", `TCP:${host}:${port},connect-timeout=4`]);
  const connectsFromClient = (host: string, port: number) => connects(APP_NS, clientPod(), host, port);
  /** The same from the gateway pod itself: what answers outside the tunnel. */
  const connectsFromGateway = (host: string, port: number) => connects(DATA_NS, gatewayPod(), host, port);
  const renderOpts = (): K8sRenderOptions => ({
    name: "wg",
    gatewayNamespace: DATA_NS,
    clientNamespace: APP_NS,
    image: node.images.wireguard,
    forwarderImage: node.images.wireguard,
    gatewayServiceType: "ClusterIP",
    keyRotation: "initial",
  });
  const gatewayConfig = (p: WireguardPlan) => {
    const keys = { privateKey: gatewayKeys.privateKey, clientPublicKeys: { [APP]: clientKeys.publicKey } };
    return { "wg0.conf": renderGatewayWgQuick(p, keys), "wg0.setconf": renderGatewaySetconf(p, keys) };
  };
  /** Plans one tunnel whose gateway the client dials at the gateway Service's ClusterIP. */
  const planFor = (endpoint: string, ports: number[]) =>
    planWireguard({
      tunnelCidr: "100.96.0.0/24",
      listenPort: 51820,
      endpoint,
      appClusters: [APP],
      connections: ports.map((port) => ({ name: `pg-${port}`, appCluster: APP, instanceHost: pgHost, port })),
    });
  const psqlViaNodePort = (nodePort: number, sql: string) =>
    execFileSync(
      "psql",
      [
        `host=${node.nodeAddress} port=${nodePort} user=postgres dbname=postgres connect_timeout=5`,
        "-tAc",
        sql,
      ],
      { encoding: "utf8", env: { ...process.env, PGPASSWORD: PASSWORD }, stdio: ["ignore", "pipe", "pipe"] },
    ).trim();

  before(async () => {
    const started = Date.now();
    const [info] = await clusters.up([{ name: CLUSTER, nodes: 1 }]);
    assert.ok(info?.node, "the cluster has a node");
    node = info.node;
    assert.ok(node.images.wireguard, "the node imported klutch.local/wireguard");
    for (const ns of [DATA_NS, APP_NS])
      apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    await eventually(
      "the service accounts",
      () =>
        [DATA_NS, APP_NS].every((ns) => kubectlTry(kc(), ["get", "sa", "default", "-n", ns]).status === 0),
      60_000,
    );

    // The data service: PostgreSQL from the local image, behind a Service with the planned port
    // 5432 and a second port (5433, the same server) that no connection plans.
    apply(
      postgresDeployment({ name: "pg", namespace: DATA_NS, image: node.images.postgres, password: PASSWORD }),
    );
    apply({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "pg", namespace: DATA_NS },
      spec: {
        selector: { app: "pg" },
        ports: [
          { name: "planned", port: 5432, targetPort: 5432 },
          { name: "unplanned", port: 5433, targetPort: 5432 },
        ],
      },
    });
    pgHost = kubectlJson<{ spec: { clusterIP: string } }>(kc(), ["get", "service", "pg", "-n", DATA_NS]).spec
      .clusterIP;

    // The gateway Service first: its ClusterIP is the endpoint the client dials.
    apply(renderGatewayService(51820, renderOpts()));
    const gatewayIp = kubectlJson<{ spec: { clusterIP: string } }>(kc(), [
      "get",
      "service",
      "wg-gateway",
      "-n",
      DATA_NS,
    ]).spec.clusterIP;
    plan = planFor(`${gatewayIp}:51820`, [5432]);
    gateway = renderGatewayManifests(plan, renderOpts());
    client = renderClientManifests(plan, APP, renderOpts());
    // The Secrets get their configs here, as WireguardTunnel fills them from secret outputs.
    apply({ ...gateway.secret, stringData: gatewayConfig(plan) });
    apply(gateway.rules);
    apply(gateway.deployment);
    apply({
      ...client.secret,
      stringData: {
        "wg0.conf": renderClientWgQuick(plan, APP, {
          privateKey: clientKeys.privateKey,
          gatewayPublicKey: gatewayKeys.publicKey,
        }),
      },
    });
    apply(client.deployment);
    for (const s of client.services) apply(s);
    // A NodePort in front of the client's forwarder, so psql on this host can be the consumer
    // (no DNS and no psql pod on the node; the rendered ClusterIP Service selects the same pod).
    apply({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "consumer", namespace: APP_NS },
      spec: {
        type: "NodePort",
        selector: client.deployment.spec.selector.matchLabels,
        ports: [{ port: 5432, targetPort: plan.clients[0]?.connections[0]?.forwarderPort ?? 0 }],
      },
    });
    await eventually("PostgreSQL to be Ready", () => pods(DATA_NS, "app=pg").some(podReady), 180_000);
    setupSeconds = Math.round((Date.now() - started) / 1000);
    process.stdout.write(
      `      set-up (cluster with a node, PostgreSQL, manifests applied) ${setupSeconds}s\n`,
    );
  });

  after(async function () {
    if (this.currentTest?.state === "failed" || process.env.KLUTCH_E2E_KEEP) {
      for (const ns of [DATA_NS, APP_NS])
        process.stdout.write(kubectlTry(kc(), ["describe", "pods", "-n", ns]).stdout.slice(-4000));
    }
    await clusters.down();
    fs.rmSync(stateDir, { recursive: true, force: true });
  });

  it("runs the gateway pod to Ready: wireguard-go listening and the filter loaded (its readiness probe)", async () => {
    await untilReady(DATA_NS, "gateway");
    const gw = gatewayPod();
    const listen = exec(DATA_NS, gw, "wireguard", ["wg", "show", "wg0", "listen-port"]);
    assert.equal(listen.stdout.trim(), "51820", listen.stderr);
    // The userspace implementation runs it (no kernel module on this machine).
    const ps = exec(DATA_NS, gw, "wireguard", ["/bin/sh", "-c", "cat /proc/[0-9]*/comm"]);
    assert.match(ps.stdout, /^wireguard-go$/m, ps.stderr);
    const sock = exec(DATA_NS, gw, "wireguard", ["stat", "-c", "%F", "/var/run/wireguard/wg0.sock"]);
    assert.equal(sock.stdout.trim(), "socket", "wireguard-go's UAPI socket");
  });

  it("runs the client pod to Ready: the tunnel has shaken hands and the forwarder listens (its probes)", async () => {
    await untilReady(APP_NS, "client");
    const c = clientPod();
    assert.deepEqual((c.status.containerStatuses ?? []).map((s) => [s.name, s.ready]).sort(), [
      ["fwd-pg-5432", true],
      ["wireguard", true],
    ]);
    const hs = exec(APP_NS, c, "wireguard", ["wg", "show", "wg0", "latest-handshakes"]);
    const [peer, at] = hs.stdout.trim().split(/\s+/);
    assert.equal(peer, gatewayKeys.publicKey);
    assert.ok(Number(at) > 0, `a handshake time: ${hs.stdout}`);
  });

  it("grants exactly CAP_NET_ADMIN and /dev/net/tun to the tunnel, nothing to the forwarders, no privileged container", () => {
    for (const p of [gatewayPod(), clientPod()]) {
      for (const container of p.spec.containers) {
        const sc = container.securityContext ?? {};
        assert.notEqual(sc.privileged, true, `${container.name} is not privileged`);
        assert.deepEqual(
          sc.capabilities,
          container.name === "wireguard" ? { drop: ["ALL"], add: ["NET_ADMIN"] } : { drop: ["ALL"] },
          container.name,
        );
      }
    }
    // What the kernel says the tunnel process holds: CapEff is NET_ADMIN (bit 12) alone.
    const status = exec(DATA_NS, gatewayPod(), "wireguard", ["cat", "/proc/self/status"]).stdout;
    assert.match(status, /^CapEff:\s+0000000000001000$/m);
    const fwd = exec(APP_NS, clientPod(), "fwd-pg-5432", ["cat", "/proc/self/status"]).stdout;
    assert.match(fwd, /^CapEff:\s+0000000000000000$/m);
    assert.match(fwd, /^Uid:\s+65534\s/m);
  });

  it("serves psql to PostgreSQL through the client's forwarder and the tunnel; PostgreSQL sees the gateway", async () => {
    const nodePort =
      kubectlJson<{ spec: { ports: { nodePort: number }[] } }>(kc(), [
        "get",
        "service",
        "consumer",
        "-n",
        APP_NS,
      ]).spec.ports[0]?.nodePort ?? 0;
    let seen = "";
    await eventually(
      "psql through the forwarder",
      () => {
        try {
          seen = psqlViaNodePort(nodePort, "select host(inet_client_addr())");
          return true;
        } catch {
          return false;
        }
      },
      60_000,
    );
    // The gateway masquerades tunnel traffic: PostgreSQL's client is the gateway pod, not the client pod.
    assert.equal(seen, gatewayPod().status.podIP);
    assert.notEqual(seen, clientPod().status.podIP);
    const transfer = exec(APP_NS, clientPod(), "wireguard", ["wg", "show", "wg0", "transfer"]).stdout;
    const [, rx] = transfer.trim().split(/\s+/);
    assert.ok(Number(rx) > 0, `bytes came back through the tunnel: ${transfer}`);
  });

  it("the gateway's filter admits the planned host:port and drops a port not planned (and the tunnel stays up)", () => {
    const flows = exec(DATA_NS, gatewayPod(), "wireguard", [
      "nft",
      "list",
      "set",
      "inet",
      NFT_TABLE,
      "flows",
    ]).stdout;
    const source = plan.clients[0]?.tunnelAddress;
    assert.match(
      flows,
      new RegExp(
        `elements = \\{ ${source?.replace(/\./g, "\\.")} \\. ${pgHost.replace(/\./g, "\\.")} \\. 5432 \\}`,
      ),
    );
    assert.equal(connectsFromClient(pgHost, 5432).status, 0, "the planned port connects");
    // 5433 reaches the same server, and the client routes it into the tunnel like 5432: only
    // the gateway's filter stands in the way.
    const direct = connectsFromGateway(pgHost, 5433);
    assert.equal(direct.status, 0, `5433 answers outside the tunnel: ${direct.stderr}`);
    const refused = connectsFromClient(pgHost, 5433);
    assert.notEqual(refused.status, 0);
    assert.match(refused.stderr, /Connection timed out|Operation timed out/i);
    assert.equal(connectsFromClient(pgHost, 5432).status, 0, "the planned port still connects");
  });

  it("a client that widens its own AllowedIPs gains nothing: the gateway drops a host not planned", () => {
    // The client controls its own config (it holds NET_ADMIN): it routes PostgreSQL's pod
    // address (a host of the data-service side no connection names) into the tunnel.
    const other = onePod(DATA_NS, "app=pg").status.podIP ?? "";
    // The host answers whoever may reach it: the gateway pod itself connects.
    const direct = connectsFromGateway(other, 5432);
    assert.equal(direct.status, 0, direct.stderr);
    const c = clientPod();
    const allowed = exec(APP_NS, c, "wireguard", ["wg", "show", "wg0", "allowed-ips"])
      .stdout.trim()
      .split(/\s+/)
      .slice(1);
    const widened = [...allowed, `${other}/32`].join(",");
    const set = (ips: string) =>
      exec(APP_NS, c, "wireguard", ["wg", "set", "wg0", "peer", gatewayKeys.publicKey, "allowed-ips", ips]);
    assert.equal(set(widened).status, 0);
    assert.equal(
      exec(APP_NS, c, "wireguard", ["ip", "route", "replace", `${other}/32`, "dev", "wg0"]).status,
      0,
    );
    try {
      const r = connectsFromClient(other, 5432);
      assert.notEqual(r.status, 0, "the gateway drops a host no flow names");
      assert.match(r.stderr, /timed out/i);
    } finally {
      exec(APP_NS, c, "wireguard", ["ip", "route", "del", `${other}/32`, "dev", "wg0"]);
      set(allowed.join(","));
    }
  });

  it("a flow added to the gateway's ConfigMap and Secret applies live: no restart, the open tunnel keeps its handshake", async () => {
    const gw = gatewayPod();
    const restarts = gw.status.containerStatuses?.[0]?.restartCount ?? -1;
    const wider = planFor(`${plan.clients[0]?.endpoint}`, [5432, 5433]);
    const opts = renderOpts();
    const next = renderGatewayManifests(wider, opts);
    apply({ ...next.secret, stringData: gatewayConfig(wider) });
    apply(next.rules);
    // The kubelet refreshes projected ConfigMaps within its sync period; the pod's loop then reloads.
    await eventually(
      "the gateway to admit 5433",
      () => connectsFromClient(pgHost, 5433).status === 0,
      180_000,
    );
    const after = gatewayPod();
    assert.equal(after.metadata.name, gw.metadata.name, "the same pod");
    assert.equal(after.status.containerStatuses?.[0]?.restartCount, restarts, "not restarted");
    assert.equal(connectsFromClient(pgHost, 5432).status, 0);
  });

  it("the WireguardTunnel component through the engine: `up` waits for its gateway and client to be Ready, psql from a pod dials the connection's hostForConsumer, `destroy` removes them", async () => {
    // Namespaces of their own, so the component's objects never meet the rendered ones above.
    const dataNs = "wge-data";
    const appNs = "wge-app";
    for (const ns of [dataNs, appNs]) apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-wg-engine-"));
    const adminKubeconfig = fs.readFileSync(kc(), "utf8");
    const program = () => {
      const provider = new k8s.Provider("wg-pods", { kubeconfig: adminKubeconfig });
      const tunnel = new WireguardTunnel("wge", {
        gatewayProvider: provider,
        gatewayNamespace: dataNs,
        appClusters: [{ name: APP, provider, namespace: appNs }],
        connections: [{ name: "orders", appCluster: APP, instanceHost: pgHost, port: 5432 }],
        tunnelCidr: "100.97.0.0/24",
        // The client resolves the gateway Service's name through the cluster DNS.
        endpoint: `wge-gateway.${dataNs}.svc.cluster.local:51820`,
        gatewayServiceType: "ClusterIP",
        image: node.images.wireguard,
        forwarderImage: node.images.wireguard,
      });
      return Promise.resolve({ endpoints: tunnel.endpoints });
    };
    const stack = await inlineStack({
      projectName: "wg-pods-e2e",
      stackName: "e2e",
      workDir: work,
      passphrase: "wg-pods-e2e-only",
      program,
    });
    const lines: string[] = [];
    try {
      const started = Date.now();
      const up = await stack.up({ onOutput: (l) => lines.push(l) }).catch((e: Error) => {
        throw new Error(`${e.message}\n${lines.slice(-30).join("")}`);
      });
      process.stdout.write(
        `      pulumi up of WireguardTunnel (waits for both pods Ready): ${((Date.now() - started) / 1000).toFixed(1)} s\n`,
      );
      // The engine waited for the rollouts (no skipAwait): both pods are Ready, probes passing.
      for (const [ns, component] of [
        [dataNs, "gateway"],
        [appNs, "client"],
      ] as const) {
        const selector = `app.kubernetes.io/component=${component}`;
        const live = pods(ns, selector);
        assert.ok(live.length > 0 && live.every(podReady), podDiagnosis(kc(), ns, selector));
        // The API server took each end's NetworkPolicy, and it selects exactly that end's pod.
        const policy = kubectlJson<{
          spec: { podSelector: { matchLabels: Record<string, string> }; ingress: { ports: unknown[] }[] };
        }>(kc(), ["get", "networkpolicy", `wge-${component}`, "-n", ns]);
        const selected = pods(
          ns,
          Object.entries(policy.spec.podSelector.matchLabels)
            .map(([k, v]) => `${k}=${v}`)
            .join(","),
        );
        assert.deepEqual(
          selected.map((p) => p.metadata.name),
          live.map((p) => p.metadata.name),
          `the ${component}'s NetworkPolicy selects its pod`,
        );
        assert.deepEqual(
          policy.spec.ingress.flatMap((r) => r.ports),
          component === "gateway" ? [{ protocol: "UDP", port: 51820 }] : [{ protocol: "TCP" }],
        );
      }
      const endpoints = up.outputs.endpoints?.value as Record<
        string,
        { hostForConsumer: string; port: number }
      >;
      const orders = endpoints.orders;
      assert.ok(orders, JSON.stringify(endpoints));
      assert.match(orders.hostForConsumer, new RegExp(`\\.${appNs}\\.svc\\.cluster\\.local$`));
      // A consumer pod dials hostForConsumer as written: the cluster DNS, the client's
      // forwarder, the tunnel, the gateway, PostgreSQL.
      const pg = onePod(DATA_NS, "app=pg");
      const r = kubectlTry(kc(), [
        "exec",
        "-n",
        DATA_NS,
        pg.metadata.name,
        "--",
        "psql",
        `host=${orders.hostForConsumer} port=${orders.port} user=postgres dbname=postgres password=${PASSWORD} connect_timeout=5`,
        "-tAc",
        "select 6 * 7",
      ]);
      assert.equal(r.stdout.trim(), "42", r.stderr);
      // The private keys stay secrets in the stack's state.
      const state = fs
        .readdirSync(path.join(work, "state", ".pulumi", "stacks", "wg-pods-e2e"))
        .map((f) => fs.readFileSync(path.join(work, "state", ".pulumi", "stacks", "wg-pods-e2e", f), "utf8"))
        .join("\n");
      assert.doesNotMatch(
        state,
        /PrivateKey = [A-Za-z0-9+/]{43}=/,
        "no wg-quick private key in clear in the state",
      );

      await stack.destroy({ onOutput: (l) => lines.push(l) });
      await eventually(
        "the component's pods to be gone",
        () =>
          pods(dataNs, "app.kubernetes.io/component=gateway").length === 0 &&
          pods(appNs, "app.kubernetes.io/component=client").length === 0,
        120_000,
      );
    } finally {
      await stack.destroy({ onOutput: () => undefined }).catch(() => undefined);
      fs.rmSync(work, { recursive: true, force: true });
    }
  });
});
