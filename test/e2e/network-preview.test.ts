import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { reapOrphans } from "../../programs/bridge/orphans";
import { proxyName } from "../../lib/bridge/grouping";
import {
  SETTINGS_CONFIGMAP,
  SETTINGS_KEY,
  SETTINGS_NAMESPACE,
  renderBridgeSettings,
} from "../../lib/bridge/settings";
import { type ConnectionReport, type NetworkPreviewReport } from "../../lib/network-preview/schema";
import { LocalClusters } from "../../host/local-clusters";
import { parseBridgeSettings } from "../../network/group-settings";
import type { LocalCrossplane } from "../../host/local-clusters/crossplane";
import { NODE_TYPESCRIPT_ARGS, repoRoot, toolchainEnv } from "../../host/automation/toolchain";
import { crossplaneWithConnectorApi } from "../helpers/crossplane-connector";
import { eventually, kubectl, kubectlApply, kubectlJson, kubectlTry } from "../helpers/kubectl";
import { runPreview, type PreviewRun } from "../helpers/network-preview";
import { TestBridge } from "../helpers/bridge-process";
import { claimYaml, claimsIn, isClaimReady, waitForClaim, type Claim } from "../helpers/kube-objects";
import { bandArg, portsFor } from "../helpers/ports";
import { Postgres } from "../helpers/pg-haproxy";

const CP = "preview-cp";
const NS = "team-a";

interface PathObject {
  metadata: { name: string };
  status?: { port?: number; conditions?: { type: string; reason: string }[] };
}

/**
 * `npm run preview:network` against the real thing: a local control plane, Crossplane core
 * composing TCPConnections into NetworkPaths, the bridge realising them with local HAProxy,
 * and the preview running the bridge's own programs through the real engine. Each scenario
 * asserts the report and exit code, then lets the bridge do it and checks that the endpoint
 * it writes is the one the preview predicted.
 */
describe("network change preview on the local stack (e2e)", function () {
  this.timeout(20 * 60_000);

  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-preview-"));
  const stateDir = path.join(work, "clusters");
  const bridgeDir = path.join(work, "bridge");
  const env = toolchainEnv();
  const hostPorts = portsFor(__filename);
  const opsPort = hostPorts.one();
  /** The bridge's first range, then the one the range-moved scenario moves it to. */
  const firstRange = bandArg(hostPorts.block(200));
  const movedRange = hostPorts.block(200);
  /** The kubernetes target's own range, from its proxy settings. */
  const settingsRange = hostPorts.block(50);
  /**
   * The instance the claims name: a real PostgreSQL on this machine, since the bridge's local
   * target reads each path's health from its HAProxy's checks (`pgsql-check` for these
   * PostgreSQL claims), and a path to nothing is not Ready.
   */
  let pg: Postgres | undefined;
  const instancePort = () => pg!.port;
  let range = firstRange;
  let clusters: LocalClusters;
  let crossplane: LocalCrossplane;
  const kc = () => clusters.kubeconfigPath(CP);

  const bridge = new TestBridge({ work, kubeconfig: kc, stateDir: bridgeDir, opsPort });
  const startBridge = (extra: string[] = []) =>
    bridge.start({ portRange: range, extra: ["--settings", "", ...extra] });
  const stopBridge = () => bridge.stop();

  const claimOf = (name: string) => claimsIn(kc(), NS).find((c) => c.metadata.name === name);

  const waitFor = (what: string, check: (c: Claim | undefined) => boolean, name: string): Promise<Claim> =>
    waitForClaim(kc(), NS, name, {
      what,
      check,
      timeoutMs: 240_000,
      diagnose: (last) => `last: ${JSON.stringify(last?.status)}\nbridge log:\n${bridge.tail(20)}`,
    });

  /** Runs the command as an ops engineer would; returns its exit code, report and Markdown. */
  const preview = (args: string[], name: string): PreviewRun =>
    runPreview({
      work,
      name,
      PATH: env.PATH ?? "",
      args: ["--kubeconfig", kc(), "--bridge-state-dir", bridgeDir, ...args],
    });

  const conn = (r: NetworkPreviewReport, id: string | RegExp): ConnectionReport => {
    const c = r.connections.find((x) => (typeof id === "string" ? x.id === id : id.test(x.id)));
    assert.ok(c, `no connection ${String(id)} in ${r.connections.map((x) => x.id).join(", ")}`);
    return c;
  };

  before(async () => {
    pg = await Postgres.start();
    clusters = new LocalClusters(stateDir);
    await clusters.up([CP]);
    crossplane = await crossplaneWithConnectorApi(kc(), stateDir, CP, env);
    kubectl(kc(), ["create", "namespace", NS]);
    startBridge();
    // An existing connection the scenarios change around.
    assert.equal(kubectlApply(kc(), claimYaml("orders", NS, instancePort())).status, 0);
    await waitFor("orders to be Ready", isClaimReady, "orders");
  });

  after(async () => {
    await pg?.stop();
    try {
      if (clusters && bridge.process) {
        kubectlTry(kc(), ["-n", NS, "delete", "tcpconnections", "--all", "--wait=true", "--timeout=120s"]);
      }
      await stopBridge();
      await crossplane?.stop?.();
      if (clusters) await clusters.down();
    } finally {
      spawnSync("pkill", ["-f", `${bridgeDir}/proxies`]);
      for (const dir of [bridgeDir, path.join(work, "bridge-kubernetes")])
        await reapOrphans(`file://${path.join(dir, "state")}`, () => undefined);
      if (process.env.KLUTCH_KEEP_PREVIEW_WORK) console.log(`work dir kept: ${work}`);
      else fs.rmSync(work, { recursive: true, force: true });
    }
  });

  it("a pending TCPConnection file: added with its predicted port, exit 3; the bridge then writes that port", async () => {
    const file = path.join(work, "pending.yaml");
    fs.writeFileSync(file, claimYaml("billing", NS, instancePort()));
    const before = claimOf("orders") as Claim;
    const { code, report, markdown } = preview(["--connections", file, "--port-range", range], "added");
    assert.equal(code, 3, report.summary.line);
    const billing = conn(report, "pending:team-a/billing");
    assert.equal(billing.risk, "added");
    assert.equal(typeof billing.after?.port, "number", JSON.stringify(billing.after));
    const orders = conn(report, /^orders-/);
    assert.equal(orders.risk, "none");
    assert.deepEqual(orders.after, { host: before.status?.hostForConsumer, port: before.status?.port });
    assert.ok(
      orders.hops.some((h) => h.kind === "proxy-port" && h.op === "update" && h.diffPaths.includes("ids")),
    );
    assert.ok(markdown.startsWith(`**Network preview: ${report.summary.line}**`));
    // Nothing was changed by the preview: the claim does not exist yet.
    assert.equal(claimOf("billing"), undefined);

    // The truth: apply it and let the bridge realise it.
    assert.equal(kubectl(kc(), ["apply", "-f", file]).length > 0, true);
    const real = await waitFor("billing to be Ready", isClaimReady, "billing");
    assert.equal(real.status?.hostForConsumer, billing.after?.host);
    assert.equal(real.status?.port, billing.after?.port);
    assert.equal(claimOf("orders")?.status?.port, before.status?.port);
  });

  it("the bridge's port range moves: endpoints changed, exit 4; restarted on it, the bridge writes the predicted ports", async () => {
    const next = bandArg(movedRange);
    const r = preview(["--all-groups", "--port-range", next], "range-moved");
    assert.equal(r.code, 4, r.report.summary.line);
    assert.equal(r.report.summary.risks["endpoint-changed"], 2);
    const predicted = new Map<string, number>();
    for (const name of ["orders", "billing"]) {
      const c = conn(r.report, new RegExp(`^${name}-`));
      // The group capped above left one of the two without a port: that one is new to its
      // consumers; the other moves from its local HAProxy port to the Service.
      const served = isClaimReady(claimOf(name));
      assert.equal(c.risk, served ? "endpoint-changed" : "added", c.reasons.join("; "));
      const port = c.after?.port;
      assert.equal(typeof port, "number");
      assert.ok((port as number) >= movedRange.from && (port as number) <= movedRange.to, `${String(port)}`);
      assert.notEqual(port, c.before?.port);
      predicted.set(name, port as number);
    }
    assert.ok(r.report.ports.reassigned.length >= 2);
    assert.match(r.markdown, /range \d+-\d+ → \d+-\d+/);

    // The truth: the bridge restarted on the new range moves them exactly there.
    await stopBridge();
    range = next;
    startBridge();
    for (const [name, port] of predicted) {
      await waitFor(`${name} to move to ${port}`, (c) => isClaimReady(c) && c?.status?.port === port, name);
    }
  });

  it("nothing to change: exit 0; an invalid --fail-on: exit 2", () => {
    const file = path.join(work, "same.yaml");
    fs.writeFileSync(file, claimYaml("orders", NS, instancePort()));
    const r = preview(["--connections", file, "--port-range", range], "unchanged");
    assert.equal(r.code, 0, r.report.summary.line);
    assert.equal(r.report.summary.grade, 0);
    const bad = spawnSync(
      process.execPath,
      [
        ...NODE_TYPESCRIPT_ARGS,
        "programs/commands/preview-network.ts",
        "--fail-on",
        "sometimes",
        "--connections",
        file,
      ],
      { cwd: repoRoot, encoding: "utf8" },
    );
    assert.equal(bad.status, 2, bad.stderr);
  });

  it("a group capped below its needs: a connection broken, exit 5; the bridge then leaves exactly that one out", async () => {
    // Slots of 3 ports and at most 3 per group: the proxy's stats and health take two, so one
    // of the two connections is left out (without the cap the bridge would grow the group).
    const cap = ["--slot-size", "3", "--max-ports-per-group", "3"];
    const r = preview(["--all-groups", "--port-range", range, ...cap], "broken");
    assert.equal(r.code, 5, r.report.summary.line);
    assert.equal(r.report.summary.risks.broken, 1, r.report.summary.line);
    const broken = r.report.connections.find((c) => c.risk === "broken") as ConnectionReport;
    assert.match(broken.reasons.join(";"), /no port left/);
    assert.equal(r.report.ports.unplaced.length, 1);
    const kept = r.report.connections.find((c) => c.risk !== "broken") as ConnectionReport;
    assert.equal(typeof kept.after?.port, "number");
    assert.equal(r.report.summary.grade, 5);

    await stopBridge();
    startBridge(cap);
    const pathOf = (name: string) =>
      kubectlJson<{ items: PathObject[] }>(kc(), ["get", "networkpaths"]).items.find(
        (p) => p.metadata.name === name,
      );
    await eventually(
      `${broken.id} to be left out for want of ports`,
      () => pathOf(broken.id)?.status?.conditions?.some((c) => c.reason === "PortRangeExhausted") === true,
      240_000,
    ).catch((e: Error) => {
      throw new Error(`${e.message}\n${JSON.stringify(pathOf(broken.id)?.status)}\n${bridge.tail(20)}`);
    });
    assert.equal(pathOf(kept.id)?.status?.port, kept.after?.port);
  });

  it("moving the bridge to the kubernetes target: endpoints at the proxy Service's DNS name and the ports predicted from the namespace's settings; the bridge then writes exactly those", async () => {
    const dataNs = "np-proxies";
    kubectl(kc(), ["create", "namespace", dataNs]);
    // The environment's settings for team-a (lib/bridge/settings.ts): a ClusterIP proxy in a
    // range of its own. They override the flags, so a preview that ignored them would predict
    // the flags' LoadBalancer (host unknown) in the flags' range.
    const own = settingsRange;
    kubectlTry(kc(), ["create", "namespace", SETTINGS_NAMESPACE]);
    const settings = {
      version: 1,
      consumers: {
        [NS]: {
          appCluster: "app-a",
          implementation: "proxy",
          proxy: { serviceType: "ClusterIP", portRange: own },
        },
      },
    };
    const configMap = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: SETTINGS_CONFIGMAP, namespace: SETTINGS_NAMESPACE },
      data: { [SETTINGS_KEY]: renderBridgeSettings(parseBridgeSettings(JSON.stringify(settings))) },
    };
    assert.equal(kubectlApply(kc(), JSON.stringify(configMap)).status, 0);
    const kubernetesDir = path.join(work, "bridge-kubernetes");
    const target = [
      "--target",
      "kubernetes",
      "--data-plane-kubeconfig",
      kc(),
      "--data-plane-namespace",
      dataNs,
      "--service-type",
      "LoadBalancer",
      "--skip-await",
    ];
    const r = preview(
      ["--all-groups", "--port-range", range, ...target, "--bridge-state-dir", kubernetesDir],
      "kubernetes",
    );
    assert.equal(r.code, 4, r.report.summary.line);
    const host = `${proxyName(`${NS}/proxy`)}.${dataNs}.svc.cluster.local`;
    const predicted = new Map<string, number>();
    for (const name of ["orders", "billing"]) {
      const c = conn(r.report, new RegExp(`^${name}-`));
      // The group capped above left one of the two without a port: that one is new to its
      // consumers; the other moves from its local HAProxy port to the Service.
      const served = isClaimReady(claimOf(name));
      assert.equal(c.risk, served ? "endpoint-changed" : "added", c.reasons.join("; "));
      assert.equal(c.after?.host, host);
      const port = c.after?.port as number;
      assert.ok(port >= own.from && port <= own.to, `${String(port)} in ${own.from}-${own.to}`);
      predicted.set(name, port);
    }
    assert.ok(
      r.report.notes.some((n) => /kubernetes target .* with its current proxy settings/.test(n)),
      r.report.notes.join("\n"),
    );

    // The truth: the bridge on that target (reading the same settings) writes exactly those.
    await stopBridge();
    bridge.start({ stateDir: kubernetesDir, portRange: range, extra: target });
    for (const [name, port] of predicted) {
      await waitFor(
        `${name} to move to ${host}:${port}`,
        (c) => isClaimReady(c) && c?.status?.hostForConsumer === host && c.status.port === port,
        name,
      );
    }
    const service = kubectlJson<{ spec: { type: string; ports: { port: number }[] } }>(kc(), [
      "-n",
      dataNs,
      "get",
      "service",
      proxyName(`${NS}/proxy`),
    ]);
    assert.equal(service.spec.type, "ClusterIP");
    assert.deepEqual(
      service.spec.ports
        .map((p) => p.port)
        .filter((p) => p >= own.from && p <= own.to)
        .sort(),
      [...predicted.values()].sort(),
    );
  });
});
