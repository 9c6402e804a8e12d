import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { Stack } from "@pulumi/pulumi/automation";
import { parse, stringify } from "yaml";
import { reapOrphans } from "../../programs/bridge/orphans";
import { renderMarkdown } from "../../lib/network-preview/render";
import { LocalClusters } from "../../host/local-clusters";
import { LocalCrossplane } from "../../host/local-clusters/crossplane";
import { LOCAL_STACK_PASSPHRASE } from "../../host/automation/pulumi-runner";
import { selectStack } from "../../programs/stack/program-stack";
import { NODE_TYPESCRIPT_ARGS, repoRoot, toolchainEnv } from "../../host/automation/toolchain";
import { claimDiagnosis } from "../helpers/claim-diagnosis";
import { eventually, kubectlApply, kubectlJson, kubectlTry } from "../helpers/kubectl";
import { runPreview, type PreviewRun } from "../helpers/network-preview";
import { TestBridge } from "../helpers/bridge-process";
import { claimYaml, claimsIn, waitForClaim, type Claim } from "../helpers/kube-objects";
import { bandArg, portsFor } from "../helpers/ports";
import { Postgres } from "../helpers/pg-haproxy";
import { setFileEnv } from "../helpers/file-env";

const CP = "control-plane";
const STACK = "preview-e2e";

/**
 * `npm run preview:network -- --stack <stack>` against a real environment stack: the local
 * clusters, `pulumi up` of a copy of the `local` stack through the real engine, Crossplane core and the
 * bridge. One stack is set up once; each scenario changes the stack's config, previews it
 * (asserting report and exit code), then applies it with `up` and checks that what the bridge
 * then writes is what the preview said.
 */
describe("network change preview of the environment stack (e2e)", function () {
  this.timeout(30 * 60_000);

  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-preview-stack-"));
  const stateDir = path.join(work, "clusters");
  const bridgeDir = path.join(work, "bridge");
  const env = toolchainEnv();
  let restoreEnv = () => {};
  // A stack of its own, made from the committed `local` one: the local-stack e2e may run beside
  // this file and checks that stacks/Pulumi.local.yaml is left as it was.
  const stackFile = path.join(repoRoot, "stacks", `Pulumi.${STACK}.yaml`);
  const stackFileBefore = fs.readFileSync(path.join(repoRoot, "stacks", "Pulumi.local.yaml"), "utf8");
  const hostPorts = portsFor(__filename);
  const opsPort = hostPorts.one();
  const range = bandArg(hostPorts.block(200));
  /**
   * The instance the claims name: a real PostgreSQL on this machine, since the bridge's local
   * target reads each path's health from its HAProxy's checks (`pgsql-check` for these
   * PostgreSQL claims), and a path to nothing is not Ready.
   */
  let pg: Postgres | undefined;
  const instancePort = () => pg!.port;
  let clusters: LocalClusters;
  let crossplane: LocalCrossplane | undefined;
  let stack: Stack;
  const kc = () => clusters.kubeconfigPath(CP);
  const bridge = new TestBridge({ work, kubeconfig: kc, stateDir: bridgeDir, opsPort, portRange: range });

  /** The committed stack file with these app clusters (the committed ones, by name, or new). */
  function setAppClusters(apps: Record<string, unknown>[]): void {
    const doc = parse(stackFileBefore) as { config: Record<string, unknown> };
    // API servers without nodes: this file runs the bridge and Crossplane as processes (the
    // committed stack gives each cluster a node; the previews here need none).
    doc.config["klutch:controlPlane"] = { name: CP, infrastructure: "local" };
    doc.config["klutch:appClusters"] = apps;
    // No node, so no names server: the committed stack's instance names are not this file's subject.
    delete doc.config["klutch:instanceNames"];
    fs.writeFileSync(stackFile, stringify(doc));
  }
  const local = (name: string, connector: Record<string, unknown> = { implementation: "proxy" }) => ({
    name,
    infrastructure: "local",
    networkConnector: connector,
  });

  const claimOf = (ns: string, name: string) => claimsIn(kc(), ns).find((c) => c.metadata.name === name);
  const waitReady = (ns: string, name: string): Promise<Claim> =>
    waitForClaim(kc(), ns, name, {
      what: `${ns}/${name} to be Ready`,
      timeoutMs: 300_000,
      // What each side last did: the bridge (status written?) and Crossplane (status propagated?).
      diagnose: () => `${claimDiagnosis(kc(), ns, name, crossplane?.logFile)}\nbridge:\n${bridge.tail(20)}`,
    });

  /**
   * The command as an ops engineer runs it, once (each run previews the whole environment
   * stack): the JSON report and the SVG; the Markdown is rendered from that report (the CLI's
   * Markdown is run by network-preview.test.ts).
   */
  function preview(args: string[], name: string): PreviewRun & { svg: string } {
    const svg = path.join(work, `${name}.svg`);
    const r = runPreview({
      work,
      name,
      PATH: env.PATH ?? "",
      formats: ["json"],
      timeoutMs: 600_000,
      args: [
        "--stack",
        STACK,
        "--kubeconfig",
        kc(),
        "--bridge-state-dir",
        bridgeDir,
        "--port-range",
        range,
        "--svg",
        svg,
        ...args,
      ],
    });
    fs.writeFileSync(path.join(work, `${name}.md`), renderMarkdown(r.report));
    return { ...r, markdown: renderMarkdown(r.report), svg: fs.readFileSync(svg, "utf8") };
  }

  before(async () => {
    pg = await Postgres.start();
    restoreEnv = setFileEnv({
      KLUTCH_LOCAL_DIR: stateDir,
      // Only the `local` stack gets a passphrase by default (host/automation/pulumi-runner.ts); this
      // copy of its file carries its encryptionsalt, so it takes the same throw-away passphrase.
      PULUMI_CONFIG_PASSPHRASE: LOCAL_STACK_PASSPHRASE,
      PULUMI_BACKEND_URL: `file://${path.join(work, "state")}`,
    });
    clusters = new LocalClusters(stateDir);
    await clusters.up([CP, "app-1", "app-2"]);
    setAppClusters([local("app-1")]);
    stack = await selectStack({ stack: STACK });
    const res = await stack.up({ color: "never" });
    assert.equal(res.summary.result, "succeeded");
    crossplane = new LocalCrossplane(stateDir, CP, env);
    await crossplane.start();
    await eventually(
      "the XRD to be established",
      () => kubectlTry(kc(), ["get", "crd", "tcpconnections.klutch.anynines.com"]).status === 0,
      180_000,
    );
    bridge.start();
    assert.equal(kubectlApply(kc(), claimYaml("orders", "cluster-app-1", instancePort())).status, 0);
    await waitReady("cluster-app-1", "orders");
  });

  after(async () => {
    await pg?.stop();
    try {
      if (clusters) {
        for (const ns of ["cluster-app-1", "cluster-app-2"])
          kubectlTry(kc(), ["-n", ns, "delete", "tcpconnections", "--all", "--wait=true", "--timeout=120s"]);
      }
      await bridge.stop();
      await crossplane?.stop?.();
      if (clusters) await clusters.down();
    } finally {
      fs.rmSync(stackFile, { force: true });
      restoreEnv();
      spawnSync("pkill", ["-f", `${bridgeDir}/proxies`]);
      await reapOrphans(`file://${path.join(bridgeDir, "state")}`, () => undefined);
      if (process.env.KLUTCH_KEEP_PREVIEW_WORK) console.log(`work dir kept: ${work}`);
      else fs.rmSync(work, { recursive: true, force: true });
    }
  });

  it("an app cluster added: added, exit 3, no connection touched; after `up` its consumer namespace takes a connection on the predicted port", async () => {
    const before = claimOf("cluster-app-1", "orders") as Claim;
    setAppClusters([local("app-1"), local("app-2")]);
    const r = preview([], "app-cluster-added");
    assert.equal(r.code, 3, `${r.report.summary.line}\n${r.stderr}`);
    const added = r.report.otherChanges.filter((h) => h.kind === "app-cluster" && h.op === "create");
    assert.ok(
      added.some((h) => /AppClusterBinding::local-app-2-binding$/.test(h.urn)),
      JSON.stringify(r.report.otherChanges),
    );
    assert.deepEqual(r.report.connections, [], "no connection is reached by a new app cluster");
    // The bridge settings gain the new consumer namespace, updated in place (its own provider).
    const settingsHops = r.report.otherChanges.filter((h) => h.kind === "proxy-settings");
    assert.deepEqual(
      settingsHops.map((h) => h.op),
      ["update"],
      JSON.stringify(r.report.otherChanges.map((h) => [h.kind, h.op, h.urn])),
    );
    assert.deepEqual(r.report.policy, []);
    assert.ok(r.markdown.startsWith(`**Network preview: ${r.report.summary.line}**`));
    // The preview changed nothing.
    assert.notEqual(kubectlTry(kc(), ["get", "namespace", "cluster-app-2"]).status, 0);

    const res = await stack.up({ color: "never" });
    assert.equal(res.summary.result, "succeeded");
    assert.equal(kubectlTry(kc(), ["get", "namespace", "cluster-app-2"]).status, 0);
    assert.equal(claimOf("cluster-app-1", "orders")?.status?.port, before.status?.port);

    // A first connection in the new app cluster's namespace: added with its predicted port.
    const file = path.join(work, "billing.yaml");
    fs.writeFileSync(file, claimYaml("billing", "cluster-app-2", instancePort()));
    const p = preview(["--connections", file], "billing-added");
    assert.equal(p.code, 3, p.report.summary.line);
    const billing = p.report.connections.find((c) => c.id === "pending:cluster-app-2/billing");
    assert.equal(billing?.risk, "added");
    assert.equal(typeof billing?.after?.port, "number");
    assert.equal(kubectlApply(kc(), fs.readFileSync(file, "utf8")).status, 0);
    const real = await waitReady("cluster-app-2", "billing");
    assert.equal(real.status?.hostForConsumer, billing?.after?.host);
    assert.equal(real.status?.port, billing?.after?.port);
  });

  it("a purpose-built violating config (a WireGuard gateway admitting a /7, which validation allows and the pack does not): the pack's violation reported, exit 5", () => {
    const billing = claimOf("cluster-app-2", "billing") as Claim;
    setAppClusters([
      local("app-1"),
      // An endpoint of its own (TEST-NET-1, never dialled: the pack refuses first), since a local
      // control plane has no load balancer to give the gateway one.
      local("app-2", {
        implementation: "wireguard",
        allowedSources: ["10.0.0.0/7"],
        endpoint: "192.0.2.10:51820",
      }),
    ]);
    const r = preview([], "policy-violation");
    assert.equal(r.code, 5, `${r.report.summary.line}\n${r.stderr}`);
    const v = r.report.policy.find((p) => p.policy === "klutch-no-world-open-load-balancer");
    assert.ok(v, JSON.stringify(r.report.policy));
    assert.equal(v.enforcement, "mandatory");
    assert.match(v.message, /admits 10\.0\.0\.0\/7, wider than a consumer network/);
    assert.match(r.markdown, /\*\*Policy\*\*[\s\S]*klutch-no-world-open-load-balancer/);
    // The truth: the engine refuses `up` of this config with the same rule, and changes nothing.
    const up = spawnSync(
      process.execPath,
      [
        ...NODE_TYPESCRIPT_ARGS,
        "programs/commands/pulumi.ts",
        "--stack",
        STACK,
        "up",
        "--yes",
        "--policy-pack",
        "programs/policy",
      ],
      { cwd: repoRoot, env: { ...process.env, PATH: env.PATH }, encoding: "utf8", timeout: 600_000 },
    );
    assert.notEqual(up.status, 0, up.stdout);
    assert.match(`${up.stdout}${up.stderr}`, /klutch-no-world-open-load-balancer/);
    assert.equal(claimOf("cluster-app-2", "billing")?.status?.port, billing.status?.port);
  });

  it("an app cluster removed: its connections removed, counted in the blast radius, exit 3; after `up` exactly those are gone", async () => {
    const orders = claimOf("cluster-app-1", "orders") as Claim;
    setAppClusters([local("app-1")]);
    const r = preview([], "app-cluster-removed");
    assert.equal(r.code, 3, `${r.report.summary.line}\n${r.stderr}`);
    const billing = r.report.connections.find((c) => /^billing-/.test(c.id));
    assert.ok(billing, r.report.connections.map((c) => c.id).join(", "));
    assert.equal(billing.risk, "removed");
    assert.equal(billing.consumer.cluster, "app-2");
    assert.match(billing.reasons.join(";"), /app cluster app-2 is removed/);
    const ns = r.report.blastRadius.find((b) => b.kind === "app-cluster" && b.op === "delete");
    assert.ok(ns, JSON.stringify(r.report.blastRadius));
    assert.deepEqual([ns.connections, ns.namespaces, ns.clusters], [1, 1, 1]);
    assert.match(r.svg, /billing-[^<]*<\/text><text[^>]*>− 127\.0\.0\.1:\d+/);
    assert.ok(!r.report.connections.some((c) => /^orders-/.test(c.id) && c.risk !== "none"));

    const res = await stack.up({ color: "never" });
    assert.equal(res.summary.result, "succeeded");
    await eventually(
      "billing's NetworkPath to be gone",
      () =>
        !kubectlJson<{ items: { metadata: { name: string } }[] }>(kc(), ["get", "networkpaths"]).items.some(
          (p) => /^billing-/.test(p.metadata.name),
        ),
      300_000,
    );
    assert.equal(claimOf("cluster-app-1", "orders")?.status?.port, orders.status?.port);
  });
});
