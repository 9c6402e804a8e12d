import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { LocalClusters } from "../../local-clusters";
import { kubectlJson } from "../helpers/kubectl";
import { installBindCrds } from "../helpers/bind-crds";
import { Postgres, assertPsqlAnswers, freePortRange, waitFor } from "../helpers/pg-haproxy";
import { YamlProgram } from "../helpers/yaml-program";
import { portsFor } from "../helpers/ports";

/** This file's own host ports (test/helpers/ports.ts). */
const hostPorts = portsFor(__filename);

const CLUSTER = "yaml-cp";

/**
 * The klutch component provider through the real engine from a Pulumi YAML program
 * (examples/yaml): the toolchain's YAML language host, the provider plugin
 * (provider/plugin/pulumi-resource-klutch), a local cluster, PostgreSQL and HAProxy processes.
 */
describe("klutch provider from Pulumi YAML (e2e)", function () {
  this.timeout(20 * 60_000);

  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-provider-yaml-"));
  const program = new YamlProgram("yaml", work);
  let clusters: LocalClusters | undefined;
  let pg: Postgres | undefined;
  let portRange = { from: 0, to: 0 };

  const pulumi = (args: string[]) => program.run(args);
  const ok = (args: string[]) => program.ok(args);
  const config = (key: string, value: string) => program.config(key, value);

  before(async function () {
    this.timeout(40 * 60_000);
    clusters = new LocalClusters(path.join(work, "clusters"));
    await clusters.up([CLUSTER]);
    // The environment installs the bind CRDs with the backend; this cluster has none.
    await installBindCrds(clusters.kubeconfigPath(CLUSTER), "10s");
    pg = await Postgres.start();
    program.prepare();
    portRange = await freePortRange(8, hostPorts);
    config("kubeconfigPath", clusters.kubeconfigPath(CLUSTER));
    config("postgresPort", String(pg.port));
    config("proxyPortFrom", String(portRange.from));
    config("proxyPortTo", String(portRange.to));
    config("proxyStateDir", path.join(work, "proxy"));
  });

  after(async function () {
    this.timeout(10 * 60_000);
    // Whatever a failed test left: destroy stops the HAProxy process and empties the cluster.
    program.cleanUp();
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
    const outputs = program.outputs();
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
    await assertPsqlAnswers(endpoint);
  });

  it("a second `up` with nothing changed changes nothing", () => {
    const preview = ok(["preview", "--expect-no-changes"]);
    assert.doesNotMatch(preview, /\+ |~ |- /);
    const out = ok(["up", "--yes", "--expect-no-changes", "--skip-preview"]);
    assert.match(out, /unchanged/);
  });

  it("bad input through the provider fails with one message naming the field, before anything changes", () => {
    const before = program.resources();
    config("proxyPortFrom", "70000");
    try {
      const r = pulumi(["up", "--yes", "--skip-preview"]);
      assert.notEqual(r.status, 0, r.out);
      assert.match(r.out, /LocalTcpProxy localProxy: invalid arguments:/);
      assert.match(r.out, /portRange/);
      assert.match(r.out, /70000/);
      assert.deepEqual(program.resources(), before);
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
