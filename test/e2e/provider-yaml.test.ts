import { strict as assert } from "node:assert";
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { LocalClusters } from "../../local-clusters";
import { ensureKubernetesPlugin } from "../../tooling/pulumi-runner";
import { repoRoot, toolchainEnv } from "../../tooling/toolchain";
import { stringify } from "yaml";
import { bindCrds } from "../../lib/bind/crds";
import { DEFAULT_BIND_RELEASE } from "../../lib/bind/release";
import { kubectl, kubectlApply, kubectlJson } from "../helpers/kubectl";
import { Postgres, freePortRange, run, waitFor } from "../helpers/pg-haproxy";

const EXAMPLE = path.join(repoRoot, "examples", "yaml");
const CLUSTER = "yaml-cp";

interface Ran {
  status: number | null;
  out: string;
}

/**
 * The klutch component provider through the real engine from a Pulumi YAML program
 * (examples/yaml): the toolchain's YAML language host, the provider plugin
 * (provider/plugin/pulumi-resource-klutch), a local cluster, PostgreSQL and HAProxy processes.
 */
describe("klutch provider from Pulumi YAML (e2e)", function () {
  this.timeout(20 * 60_000);

  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-provider-yaml-"));
  /** A stack of its own per run, so parallel runs on one machine never share a stack file. */
  const stack = `e2e-${path
    .basename(work)
    .replace(/[^a-z0-9]/gi, "")
    .slice(-8)
    .toLowerCase()}`;
  const stackFile = path.join(EXAMPLE, `Pulumi.${stack}.yaml`);
  const env: NodeJS.ProcessEnv = {
    ...toolchainEnv(),
    PULUMI_BACKEND_URL: `file://${path.join(work, "state")}`,
    PULUMI_HOME: path.join(work, "home"),
    PULUMI_CONFIG_PASSPHRASE: "provider-e2e",
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    PULUMI_IGNORE_AMBIENT_PLUGINS: "true",
  };
  let clusters: LocalClusters | undefined;
  let pg: Postgres | undefined;
  let portRange = { from: 0, to: 0 };

  const pulumi = (args: string[], cwd = EXAMPLE): Ran => {
    const r = spawnSync("pulumi", [...args, "--stack", stack, "--non-interactive", "--color", "never"], {
      cwd,
      env,
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    });
    return { status: r.status, out: `${r.stdout}\n${r.stderr}` };
  };
  const ok = (args: string[]): string => {
    const r = pulumi(args);
    assert.equal(r.status, 0, r.out);
    return r.out;
  };
  const config = (key: string, value: string) => ok(["config", "set", key, value]);

  before(async function () {
    this.timeout(40 * 60_000);
    // Build what is missing only: a warm cache needs no build lock (another run may hold it).
    const toolchain = path.join(repoRoot, "scripts", "toolchain.sh");
    const status = execFileSync("bash", [toolchain, "status"], { encoding: "utf8" });
    for (const [part, entry] of [
      ["pulumi", "/pulumi-3"],
      ["pulumi-kubernetes", "/pulumi-resource-kubernetes-"],
      ["pulumi-yaml", "/pulumi-language-yaml-"],
    ] as const) {
      if (status.split("\n").some((l) => l.includes(entry) && /missing$/.test(l.trim())))
        execFileSync("bash", [toolchain, "build", part], { stdio: "inherit" });
    }
    fs.mkdirSync(path.join(work, "state"), { recursive: true });
    ensureKubernetesPlugin(env);
    clusters = new LocalClusters(path.join(work, "clusters"));
    await clusters.up([CLUSTER]);
    // ExportedApi makes an APIServiceExportTemplate: the bind backend's CRDs come first (the
    // environment installs them with the backend).
    const kc = clusters.kubeconfigPath(CLUSTER);
    kubectlApply(
      kc,
      bindCrds(DEFAULT_BIND_RELEASE, {})
        .map((c) => stringify(c))
        .join("---\n"),
    );
    kubectl(kc, ["wait", "--for=condition=Established", "--timeout=120s", "crd", "--all"]);
    pg = await Postgres.start();
    ok(["stack", "init"]);
    portRange = await freePortRange(8);
    config("kubeconfigPath", clusters.kubeconfigPath(CLUSTER));
    config("postgresPort", String(pg.port));
    config("proxyPortFrom", String(portRange.from));
    config("proxyPortTo", String(portRange.to));
    config("proxyStateDir", path.join(work, "proxy"));
  });

  after(async function () {
    this.timeout(10 * 60_000);
    // Whatever a failed test left: destroy stops the HAProxy process and empties the cluster.
    if (fs.existsSync(stackFile)) pulumi(["destroy", "--yes", "--skip-preview"]);
    fs.rmSync(stackFile, { force: true });
    if (pg) await pg.destroy();
    if (clusters) await clusters.down({ purge: true });
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("previews the YAML program's klutch components", () => {
    const out = ok(["preview", "--diff"]);
    for (const t of [
      "klutch:cluster:LocalCluster",
      "klutch:network:TcpProxy",
      "klutch:network:LocalTcpProxy",
      "klutch:bind:ExportedApi",
    ])
      assert.match(out, new RegExp(t), out);
  });

  it("`up` creates them, the kubeconfig stays a secret, and psql goes through the YAML program's proxy", async () => {
    ok(["up", "--yes", "--skip-preview"]);
    const outputs = JSON.parse(
      ok(["stack", "output", "--json"])
        .trim()
        .split("\n")
        .filter((l) => !/warn/i.test(l))
        .join("\n"),
    ) as Record<string, unknown>;
    assert.equal(outputs.kubeconfig, "[secret]", "the kubeconfig output must stay a secret");
    const state = ok(["stack", "export"]);
    const kubeconfigText = fs.readFileSync(clusters!.kubeconfigPath(CLUSTER), "utf8");
    const clientKey = /client-key-data: (\S+)/.exec(kubeconfigText)?.[1];
    if (clientKey)
      assert.ok(!state.includes(clientKey), "the cluster's client key is in the state in plain text");

    // The TcpProxy's Kubernetes objects are on the cluster.
    const kc = clusters!.kubeconfigPath(CLUSTER);
    const svc = kubectlJson<{ spec: { ports: { port: number }[] } }>(kc, [
      "-n",
      "default",
      "get",
      "service",
      "proxy",
    ]);
    const assignments = outputs.proxyAssignments as Record<string, number>;
    assert.deepEqual(
      svc.spec.ports.map((p) => p.port),
      [assignments["team-a/pg-1"]],
    );
    const template = kubectlJson<{ spec: { resources: { resource: string }[] } }>(kc, [
      "-n",
      "default",
      "get",
      "apiserviceexporttemplates",
      outputs.templateName as string,
    ]);
    assert.ok(template);

    // The local path: psql through the HAProxy process the YAML program made.
    const endpoint = (outputs.endpoints as Record<string, { hostForConsumer: string; port: number }>)[
      "team-a/pg-1"
    ];
    assert.ok(endpoint, JSON.stringify(outputs.endpoints));
    const r = await run("psql", [
      "-h",
      endpoint.hostForConsumer,
      "-p",
      String(endpoint.port),
      "-tAc",
      "select 40 + 2",
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), "42");
  });

  it("a second `up` with nothing changed changes nothing", () => {
    const preview = ok(["preview", "--expect-no-changes"]);
    assert.doesNotMatch(preview, /\+ |~ |- /);
    const out = ok(["up", "--yes", "--expect-no-changes", "--skip-preview"]);
    assert.match(out, /unchanged/);
  });

  it("bad input through the provider fails with one message naming the field, before anything changes", () => {
    const before = ok(["stack", "export"]);
    config("proxyPortFrom", "70000");
    try {
      const r = pulumi(["up", "--yes", "--skip-preview"]);
      assert.notEqual(r.status, 0, r.out);
      assert.match(r.out, /LocalTcpProxy localProxy: invalid arguments:/);
      assert.match(r.out, /portRange/);
      assert.match(r.out, /70000/);
      const resources = (s: string) =>
        (JSON.parse(s) as { deployment: { resources: { urn: string }[] } }).deployment.resources
          .map((x) => x.urn)
          .sort();
      assert.deepEqual(resources(ok(["stack", "export"])), resources(before));
    } finally {
      config("proxyPortFrom", String(portRange.from));
    }
  });

  it("`destroy` removes everything: the Kubernetes objects and the HAProxy process", async () => {
    const pidFile = path.join(work, "proxy", "haproxy.pid");
    const pid = Number(fs.readFileSync(pidFile, "utf8").trim());
    const destroyed = ok(["destroy", "--yes", "--skip-preview"]);
    // Gone, or a zombie: HAProxy daemonizes, so an exited one waits for this machine's init to reap it.
    const running = () => {
      try {
        return !/^State:\s+Z/m.test(fs.readFileSync(`/proc/${pid}/status`, "utf8"));
      } catch {
        return false;
      }
    };
    await waitFor(`HAProxy ${pid} to stop after destroy:\n${destroyed}`, 60_000, () => !running());
    const kc = clusters!.kubeconfigPath(CLUSTER);
    const services = kubectlJson<{ items: { metadata: { name: string } }[] }>(kc, [
      "-n",
      "default",
      "get",
      "services",
    ]);
    assert.ok(!services.items.some((s) => s.metadata.name === "proxy"));
  });
});
