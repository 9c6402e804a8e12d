import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { LocalClusters } from "../../host/local-clusters";
import type { EnvironmentConfig } from "../../lib/config/schema";
import { existingCrossplaneCheck } from "../../programs/stack/existing-crossplane";
import { kubectl, kubectlApply, kubectlJson } from "../helpers/kubectl";

const CLUSTER = "existing-cp";

/** What the check reads of a config: an existing control plane of environment `ops`. */
const config = (kubeconfig: string) =>
  ({
    environment: "ops",
    controlPlane: { name: "ops-cp", infrastructure: "existing", kubeconfig: { path: kubeconfig } },
    appClusters: [],
  }) as unknown as EnvironmentConfig;

/** Crossplane core's Deployment as its chart (2.4.0) labels it, installed by someone else. */
const crossplaneDeployment = (namespace: string, tag: string, labels: Record<string, string> = {}) =>
  JSON.stringify({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: "crossplane",
      namespace,
      labels: { app: "crossplane", release: "crossplane", "app.kubernetes.io/name": "crossplane", ...labels },
    },
    spec: {
      selector: { matchLabels: { app: "crossplane", release: "crossplane" } },
      template: {
        metadata: { labels: { app: "crossplane", release: "crossplane" } },
        spec: {
          containers: [{ name: "crossplane", image: `xpkg.crossplane.io/crossplane/crossplane:${tag}` }],
        },
      },
    },
  });

/**
 * A control plane handed over by kubeconfig, as an operator's is, on a real kube-apiserver (an
 * API-only local cluster: no node runs the Deployments, which the check only reads): a Crossplane
 * someone else installed is refused naming its version, Deployment and owner; the environment's
 * own is not; the check changes nothing on the cluster.
 */
describe("a Crossplane already on an existing control plane, asked of a real API server (e2e)", function () {
  this.timeout(5 * 60_000);
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-existing-cp-"));
  const clusters = new LocalClusters(stateDir);
  const kc = () => clusters.kubeconfigPath(CLUSTER);
  const check = () =>
    existingCrossplaneCheck({ config: config(kc()), kubeconfig: fs.readFileSync(kc(), "utf8") }, "2.4.0");
  const apply = (doc: string) => {
    const r = kubectlApply(kc(), doc);
    assert.equal(r.status, 0, r.stderr);
  };

  before(async () => {
    await clusters.up([CLUSTER]);
  });

  after(async () => {
    await clusters.down();
    fs.rmSync(stateDir, { recursive: true, force: true });
  });

  it("a control plane without Crossplane: nothing refused, nothing said", async () => {
    assert.deepEqual(await check(), { issues: [], notes: [] });
  });

  it("a Crossplane someone else installed, in any namespace, is refused on the kubeconfig's field, naming version, Deployment and the fix; the cluster is left as it was", async () => {
    kubectl(kc(), ["create", "namespace", "upbound-system"]);
    apply(crossplaneDeployment("upbound-system", "v2.3.0"));
    const before = kubectlJson<{ metadata: { resourceVersion: string } }>(kc(), [
      "-n",
      "upbound-system",
      "get",
      "deployment",
      "crossplane",
    ]).metadata.resourceVersion;
    const answers = await check();
    assert.deepEqual(answers.notes, []);
    assert.deepEqual(
      answers.issues.map((i) => i.path),
      ["klutch:controlPlane.kubeconfig"],
    );
    assert.match(
      answers.issues[0]!.message,
      /^the control plane ops-cp already runs Crossplane 2\.3\.0 as Deployment upbound-system\/crossplane, which environment ops did not install \(it has no label klutch\.anynines\.com\/environment=ops\); this environment installs Crossplane 2\.4\.0 itself/,
    );
    assert.equal(
      kubectlJson<{ metadata: { resourceVersion: string } }>(kc(), [
        "-n",
        "upbound-system",
        "get",
        "deployment",
        "crossplane",
      ]).metadata.resourceVersion,
      before,
      "read only",
    );
    kubectl(kc(), ["delete", "namespace", "upbound-system", "--wait=true"]);
  });

  it("the environment's own Crossplane (its label, as the chart's customLabels put it) is not refused; another environment's is", async () => {
    kubectl(kc(), ["create", "namespace", "crossplane-system"]);
    apply(crossplaneDeployment("crossplane-system", "v2.4.0", { "klutch.anynines.com/environment": "ops" }));
    assert.deepEqual(await check(), { issues: [], notes: [] });
    apply(
      crossplaneDeployment("crossplane-system", "v2.4.0", { "klutch.anynines.com/environment": "staging" }),
    );
    const [issue] = (await check()).issues;
    assert.match(
      issue!.message,
      /Crossplane 2\.4\.0 as Deployment crossplane-system\/crossplane.*\(it belongs to environment staging\)/,
    );
  });

  it("a server that cannot be asked refuses nothing and says so", async () => {
    const unreachable = fs
      .readFileSync(kc(), "utf8")
      .replace(/server: https:\/\/[^\s]+/, "server: https://127.0.0.1:1");
    const answers = await existingCrossplaneCheck({ config: config(kc()), kubeconfig: unreachable }, "2.4.0");
    assert.deepEqual(answers.issues, []);
    assert.match(
      answers.notes[0] ?? "",
      /^could not ask the control plane ops-cp whether it runs a Crossplane already/,
    );
  });
});
