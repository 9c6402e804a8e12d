import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { LocalClusters } from "../../host/local-clusters";
import { kubectlJson, kubectlTry } from "../helpers/kubectl";
import { YamlProgram } from "../helpers/yaml-program";

const CP = "yaml-bind-cp";
const APP = "yaml-bind-app";

/**
 * The klutch-bind components and Crossplane through the real engine from Pulumi YAML
 * (examples/yaml-bind): Crossplane, OidcProvider (Dex), KlutchBindBackend, ExportedApi and
 * AppClusterBinding on two local clusters of their own (no nodes: objects are applied, no pod runs).
 */
describe("klutch provider: klutch-bind from Pulumi YAML (e2e)", function () {
  this.timeout(20 * 60_000);

  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-provider-bind-"));
  const program = new YamlProgram("yaml-bind", work);
  let clusters: LocalClusters | undefined;
  const kc = (cluster: string) => clusters!.kubeconfigPath(cluster);
  const exists = (cluster: string, args: string[]) => kubectlTry(kc(cluster), ["get", ...args]).status === 0;

  before(async function () {
    this.timeout(40 * 60_000);
    clusters = new LocalClusters(path.join(work, "clusters"));
    await clusters.up([CP, APP]);
    program.prepare();
    program.config("controlPlaneKubeconfig", kc(CP));
    program.config("appClusterKubeconfig", kc(APP));
  });

  after(async function () {
    this.timeout(10 * 60_000);
    program.cleanUp();
    if (clusters) await clusters.down({ purge: true });
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("previews Dex, the backend, the exported API and the binding", () => {
    const out = program.ok(["preview", "--diff"]);
    for (const t of [
      "klutch:crossplane:Crossplane",
      "klutch:bind:OidcProvider",
      "klutch:bind:KlutchBindBackend",
      "klutch:bind:ExportedApi",
      "klutch:bind:AppClusterBinding",
    ])
      assert.match(out, new RegExp(t), out);
  });

  it("`up` applies them on both clusters in order, and the secrets stay secrets", () => {
    program.ok(["up", "--yes", "--skip-preview"]);
    const outputs = program.outputs();
    assert.equal(outputs.issuerUrl, "https://bind.yaml.localhost/dex");
    assert.equal(outputs.clientSecret, "[secret]");
    assert.equal(outputs.binderKubeconfig, "[secret]");
    assert.equal(outputs.consumerNamespace, "cluster-app-1");
    assert.deepEqual(outputs.boundApis, ["postgresqlinstances.anynines.com"]);

    // Crossplane: core from the toolchain's chart (with --enable-ssa-claims), its CRDs, the packages.
    const core = kubectlJson<{ spec: { template: { spec: { containers: { args: string[] }[] } } } }>(kc(CP), [
      "-n",
      "crossplane-system",
      "get",
      "deployment",
      "crossplane",
    ]);
    assert.ok(core.spec.template.spec.containers[0]!.args.includes("--enable-ssa-claims"));
    assert.ok(exists(CP, ["crd", "providers.pkg.crossplane.io"]));
    assert.equal((outputs.crossplanePackages as string[]).length, 6);
    for (const pkg of outputs.crossplanePackages as string[]) {
      const [kind, name] = pkg.split("/");
      assert.ok(exists(CP, [`${kind!.toLowerCase()}s.pkg.crossplane.io`, name!]), pkg);
    }

    // Control plane: Dex, the backend, its CRDs, the template (after the CRDs: dependsOn
    // reached it under the component) and the binding's side.
    for (const args of [
      ["-n", "bind", "deployment", "dex"],
      ["-n", "bind", "deployment", "klutch-bind-backend"],
      ["-n", "bind", "service", "klutch-bind-backend"],
      ["crd", "clusterbindings.klutch.anynines.com"],
      ["-n", "default", "apiserviceexporttemplates", outputs.templateName as string],
      ["-n", "cluster-app-1", "clusterbindings", "cluster"],
      ["-n", "cluster-app-1", "apiserviceexportrequests", "postgresqlinstances.anynines.com"],
    ])
      assert.ok(exists(CP, args), `control plane: ${args.join(" ")}`);
    // App cluster: the konnector and the binding.
    for (const args of [
      ["-n", "klutch-bind", "deployment", "konnector"],
      ["apiservicebindings", "postgresqlinstances.anynines.com"],
    ])
      assert.ok(exists(APP, args), `app cluster: ${args.join(" ")}`);

    // The generated OIDC client secret reached the backend's Secret, and nowhere in the state in plain text.
    const secret = kubectlJson<{ data: Record<string, string> }>(kc(CP), [
      "-n",
      "bind",
      "get",
      "secret",
      "klutch-bind-backend",
    ]);
    const clientSecret = Buffer.from(secret.data.OIDC_CLIENT_SECRET!, "base64").toString("utf8");
    assert.match(clientSecret, /^[0-9a-f]{64}$/);
    const state = program.ok(["stack", "export"]);
    assert.ok(!state.includes(clientSecret), "the OIDC client secret is in the state in plain text");
    const token = /token: (\S+)/.exec(fs.readFileSync(kc(CP), "utf8"))?.[1];
    const clientKey = /client-key-data: (\S+)/.exec(fs.readFileSync(kc(CP), "utf8"))?.[1];
    for (const s of [token, clientKey])
      if (s) assert.ok(!state.includes(s), "a kubeconfig credential is in the state");
  });

  it("a second `up` with nothing changed changes nothing", () => {
    // Without --skip-preview: the engine previews, and --expect-no-changes fails on any change.
    const out = program.ok(["up", "--yes", "--expect-no-changes"]);
    assert.doesNotMatch(out, /^\s*[+~-] /m);
    assert.match(out, /unchanged/);
  });

  it("bad input fails with one message naming the field, before anything changes", () => {
    const before = program.resources();
    program.config("namespacePrefix", "Not_A_Label");
    try {
      const r = program.run(["up", "--yes", "--skip-preview"]);
      assert.notEqual(r.status, 0, r.out);
      assert.match(r.out, /(KlutchBindBackend bindBackend|AppClusterBinding binding): invalid arguments:/);
      assert.match(r.out, /namespacePrefix: .*"Not_A_Label"/);
      assert.deepEqual(program.resources(), before);
    } finally {
      program.config("namespacePrefix", "cluster");
    }
  });

  it("`destroy` removes the objects from both clusters", () => {
    program.ok(["destroy", "--yes", "--skip-preview"]);
    assert.ok(!exists(CP, ["-n", "bind", "deployment", "klutch-bind-backend"]));
    assert.ok(!exists(CP, ["crd", "clusterbindings.klutch.anynines.com"]));
    assert.ok(!exists(CP, ["-n", "crossplane-system", "deployment", "crossplane"]));
    assert.ok(!exists(APP, ["-n", "klutch-bind", "deployment", "konnector"]));
  });
});
