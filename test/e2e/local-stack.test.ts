import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Stack } from "@pulumi/pulumi/automation";
import { readLocalClusterNames } from "../../lib/config/stack-file";
import { LocalClusters } from "../../lib/local-clusters";
import { selectStack } from "../../lib/pulumi-runner";
import { repoRoot } from "../../lib/toolchain";
import { eventually, kubectlJson, kubectlTry } from "../helpers/kubectl";

function listFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? listFiles(p) : [p];
  });
}

/**
 * The foundation end to end: real local API servers, the real Pulumi CLI and engine, the
 * `local` stack as committed. Creates, checks through the API servers, expects a no-op
 * second run, destroys, and leaves no process behind.
 */
describe("local stack on real clusters (e2e)", function () {
  this.timeout(15 * 60_000);

  const names = readLocalClusterNames("local");
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-e2e-"));
  const stateDir = path.join(work, "clusters");
  const saved = { ...process.env };
  let clusters: LocalClusters;
  let stack: Stack;
  const log: string[] = [];
  const onOutput = (s: string) => log.push(s);
  const stackFile = path.join(repoRoot, "stacks", "Pulumi.local.yaml");
  const stackFileBefore = fs.readFileSync(stackFile, "utf8");

  before(async () => {
    process.env.KLUTCH_LOCAL_DIR = stateDir;
    process.env.PULUMI_BACKEND_URL = `file://${path.join(work, "state")}`;
    clusters = new LocalClusters(stateDir);
    await clusters.up(names);
    stack = await selectStack({ stack: "local" });
  });

  after(async () => {
    try {
      if (clusters) await clusters.down();
    } finally {
      process.env = saved;
    }
    const leftovers = clusters ? clusters.leftoverProcesses() : [];
    fs.rmSync(work, { recursive: true, force: true });
    assert.deepEqual(leftovers, [], "local cluster processes left behind");
  });

  const kubeconfig = (cluster: string) => clusters.kubeconfigPath(cluster);

  it("uses the stack's control plane and app clusters", () => {
    assert.deepEqual(names, ["control-plane", "app-1", "app-2"]);
  });

  let created = 0;

  it("`pulumi up` creates the environment through the real engine", async () => {
    const res = await stack.up({ onOutput });
    assert.equal(res.summary.result, "succeeded");
    created = res.summary.resourceChanges?.create ?? 0;
    // stack, environment, 3 clusters with their providers, 4 namespaces, Crossplane and its children
    assert.ok(created > 12, `only ${created} resources created:\n${log.join("")}`);
    assert.deepEqual(res.outputs.appClusters?.value, ["app-1", "app-2"]);
  });

  it("installs Crossplane on the control plane only: CRDs, core with SSA claims, pinned packages", () => {
    const cp = kubeconfig("control-plane");
    for (const crd of [
      "providers.pkg.crossplane.io",
      "compositeresourcedefinitions.apiextensions.crossplane.io",
    ]) {
      assert.equal(kubectlJson(cp, ["get", "crd", crd]).metadata.name, crd);
    }
    const deploy = kubectlJson(cp, ["-n", "crossplane-system", "get", "deployment", "crossplane"]);
    assert.ok(deploy.spec.template.spec.containers[0].args.includes("--enable-ssa-claims"));
    assert.match(deploy.spec.template.spec.containers[0].image, /:v1\.20\.1$/);
    const provider = kubectlJson(cp, ["get", "providers.pkg.crossplane.io", "provider-kubernetes"]);
    assert.match(provider.spec.package, /provider-kubernetes:v\d/);
    assert.notEqual(kubectlTry(kubeconfig("app-1"), ["get", "crd", "providers.pkg.crossplane.io"]).status, 0);
  });

  it("the namespaces exist on the right API servers, labelled with the environment", () => {
    const expected: Record<string, string[]> = {
      "control-plane": ["crossplane-system", "bind"],
      "app-1": ["klutch-bind"],
      "app-2": ["klutch-bind"],
    };
    for (const [cluster, namespaces] of Object.entries(expected)) {
      for (const ns of namespaces) {
        const obj = kubectlJson(kubeconfig(cluster), ["get", "namespace", ns]);
        assert.equal(obj.metadata.labels["klutch.anynines.com/environment"], "local");
        assert.equal(obj.metadata.labels["app.kubernetes.io/managed-by"], "pulumi");
      }
    }
    // And nowhere else: an app cluster has no control plane namespaces.
    assert.notEqual(kubectlTry(kubeconfig("app-1"), ["get", "namespace", "bind"]).status, 0);
    assert.notEqual(kubectlTry(kubeconfig("control-plane"), ["get", "namespace", "klutch-bind"]).status, 0);
  });

  it("`pulumi preview --expect-no-changes` passes and a second `up` changes nothing", async () => {
    const preview = await stack.preview({ expectNoChanges: true });
    assert.deepEqual(Object.keys(preview.changeSummary), ["same"]);
    const res = await stack.up();
    assert.deepEqual(Object.keys(res.summary.resourceChanges ?? {}), ["same"]);
  });

  it("keeps every kubeconfig out of the state in plain text", () => {
    // The state at rest: every file of the file backend (the Automation API's exportStack
    // would decrypt secrets, so the files themselves are read).
    const files = listFiles(path.join(work, "state"));
    assert.ok(
      files.some((f) => f.endsWith("local.json")),
      `no stack state among ${files.join(", ")}`,
    );
    const state = files.map((f) => fs.readFileSync(f, "utf8")).join("\n");
    for (const cluster of names) {
      const text = fs.readFileSync(kubeconfig(cluster), "utf8");
      for (const field of ["client-key-data", "client-certificate-data"]) {
        const value = new RegExp(`${field}: (\\S+)`).exec(text)?.[1];
        assert.ok(value, `kubeconfig of ${cluster} has ${field}`);
        assert.ok(
          !state.includes(value.slice(0, 64)),
          `${field} of ${cluster} appears in the state in plain text`,
        );
      }
    }
    assert.ok(state.includes("ciphertext"), "the state holds the kubeconfigs encrypted");
  });

  it("`pulumi destroy` removes everything it created", async () => {
    const res = await stack.destroy({ onOutput });
    assert.equal(res.summary.result, "succeeded");
    assert.equal(res.summary.resourceChanges?.delete, created, log.join(""));
    // Namespace deletion is finalised by the real namespace controller.
    await eventually("namespaces to be gone", () =>
      ["crossplane-system", "bind"].every(
        (ns) => kubectlTry(kubeconfig("control-plane"), ["get", "namespace", ns]).status !== 0,
      ),
    );
    const state = await stack.exportStack();
    assert.equal((state.deployment as { resources?: unknown[] }).resources?.length ?? 0, 0);
    // Keep the committed stack file: `stack rm` deletes it unless told otherwise.
    await stack.workspace.removeStack("local", { preserveConfig: true });
  });

  it("leaves the committed stack file exactly as it was", () => {
    assert.equal(fs.readFileSync(stackFile, "utf8"), stackFileBefore);
  });
});
