import { DEFAULT_BIND_RELEASE } from "../../lib/bind/upstream/release";
import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { stringify } from "yaml";
import { bindCrds, type BindKindKey } from "../../lib/bind/crds";
import { LocalClusters } from "../../host/local-clusters";
import { toolchainEnv } from "../../host/automation/toolchain";
import { SAMPLE_NAMESPACES, invalidSamplesOf, validSamples, type BindSample } from "../helpers/bind-samples";
import { kubectl, kubectlApply, kubectlJson, kubectlTry } from "../helpers/kubectl";

const CLUSTER = "bind-crds";
const env = toolchainEnv();

/** `kubectl create` of one object from memory (strict field validation, kubectl's default). */
function create(kubeconfig: string, object: Record<string, unknown>, dryRun = false) {
  const args = ["--kubeconfig", kubeconfig, "create", "-f", "-", ...(dryRun ? ["--dry-run=server"] : [])];
  const r = spawnSync("kubectl", args, { env, encoding: "utf8", input: stringify(object) });
  return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** The first valid sample of a kind. */
function sampleOf(kind: BindKindKey): BindSample {
  const found = validSamples().find((s) => s.kind === kind);
  assert.ok(found, `no valid ${kind} sample`);
  return found;
}

const ref = (s: BindSample) => [
  `${s.object.kind}.${String(s.object.apiVersion).split("/")[0]}`,
  s.object.metadata.name,
  "-n",
  s.object.metadata.namespace,
];

/**
 * The bind CRDs on a real kube-apiserver: it takes them as structural schemas, accepts the
 * objects Klutch documents and creates, applies the defaults of the Go markers, and refuses
 * bad objects (schema and CEL rules) naming the field.
 */
describe("klutch-bind CRDs on a real API server (e2e)", function () {
  this.timeout(5 * 60_000);

  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-bind-crds-"));
  const clusters = new LocalClusters(stateDir);
  const kc = () => clusters.kubeconfigPath(CLUSTER);
  // The pinned release's CRDs (v1.4.0 unless bind.version says otherwise).
  const crds = bindCrds(DEFAULT_BIND_RELEASE, { "app.kubernetes.io/part-of": "klutch" });

  before(async () => {
    await clusters.up([CLUSTER]);
  });

  after(async () => {
    await clusters.down();
    fs.rmSync(stateDir, { recursive: true, force: true });
  });

  it("installs every CRD and the API server establishes them", () => {
    const applied = kubectlApply(kc(), crds.map((c) => stringify(c)).join("---\n"));
    assert.equal(applied.status, 0, applied.stderr);
    const names = crds.map((c) => `crd/${c.metadata.name}`);
    kubectl(kc(), ["wait", "--for=condition=Established", "--timeout=60s", ...names]);
    for (const crd of crds) {
      const stored = kubectlJson(kc(), ["get", "crd", crd.metadata.name]);
      const conditions = Object.fromEntries(
        (stored.status.conditions as { type: string; status: string }[]).map((c) => [c.type, c.status]),
      );
      // NonStructuralSchema would be set (True) if any schema broke the structural rules.
      assert.equal(conditions.NonStructuralSchema, undefined, crd.metadata.name);
      assert.equal(conditions.NamesAccepted, "True", crd.metadata.name);
      assert.equal(conditions.Established, "True", crd.metadata.name);
    }
    const categories = kubectl(kc(), ["api-resources", "--categories=kube-bindings", "-o", "name"]);
    assert.equal(categories.trim().split("\n").length, 6, categories);
  });

  it("accepts every valid sample", () => {
    for (const ns of SAMPLE_NAMESPACES) kubectl(kc(), ["create", "namespace", ns]);
    for (const sample of validSamples()) {
      const r = create(kc(), sample.object);
      assert.equal(r.status, 0, `${sample.title}: ${r.stderr}`);
    }
  });

  it("applies the defaults of the release's markers (group, selector, status phase)", () => {
    const template = kubectlJson(kc(), ["get", ...ref(sampleOf("apiServiceExportTemplate"))]);
    assert.equal(template.spec.APIServiceSelector.group, "anynines.com");
    assert.deepEqual(template.spec.permissionClaims[0], {
      group: "",
      resource: "secrets",
      version: "v1",
      selector: { owner: "Provider", names: ["*"], namespaces: ["*"] },
      // v1.5.0's controller-gen also defaults read and onConflict to {} (and so their fields); v1.4.0's does not.
      ...(DEFAULT_BIND_RELEASE === "v1.5.0"
        ? { read: {}, onConflict: { recreateWhenConsumerSideDeleted: true } }
        : {}),
    });
    const request = sampleOf("apiServiceExportRequest");
    const stored = kubectlJson(kc(), ["get", ...ref(request)]);
    assert.deepEqual(stored.status, { phase: "Pending" });
    assert.deepEqual(stored.spec.parameters, request.object.spec.parameters, "raw parameters kept as sent");
  });

  for (const sample of invalidSamplesOf(DEFAULT_BIND_RELEASE)) {
    it(`refuses ${sample.title} (${sample.by}), naming ${sample.field}`, () => {
      const r = create(kc(), sample.object, true);
      assert.notEqual(r.status, 0, `accepted: ${r.stdout}`);
      assert.ok(r.stderr.includes(sample.field), `${sample.field} not named in: ${r.stderr}`);
      if (sample.message) assert.ok(r.stderr.includes(sample.message), r.stderr);
    });
  }

  it("refuses changes to immutable fields: kubeconfigSecretRef, parameters, resources", () => {
    const changes: [BindSample, string, string][] = [
      [
        sampleOf("apiServiceBinding"),
        '{"spec":{"kubeconfigSecretRef":{"name":"other"}}}',
        "kubeconfigSecretRef is immutable",
      ],
      [
        sampleOf("clusterBinding"),
        '{"spec":{"kubeconfigSecretRef":{"name":"other"}}}',
        "kubeconfigSecretRef is immutable",
      ],
      [
        sampleOf("apiServiceExportRequest"),
        '{"spec":{"parameters":{"region":"us-east-1"}}}',
        "parameters are immutable",
      ],
      [
        sampleOf("apiServiceExportRequest"),
        '{"spec":{"resources":[{"group":"anynines.com","resource":"backups"}]}}',
        "resources are immutable",
      ],
    ];
    for (const [sample, patch, message] of changes) {
      const r = kubectlTry(kc(), ["patch", ...ref(sample), "--type=merge", "-p", patch]);
      assert.notEqual(r.status, 0, `${sample.title} changed`);
      assert.ok(r.stderr.includes(message), r.stderr);
    }
    // Fields without a transition rule stay editable.
    const ok = kubectlTry(kc(), [
      "patch",
      ...ref(sampleOf("clusterBinding")),
      "--type=merge",
      "-p",
      '{"spec":{"providerPrettyName":"Another name"}}',
    ]);
    assert.equal(ok.status, 0, ok.stderr);
  });

  it("lets the status subresource, not the main resource, write status", () => {
    const binding = sampleOf("clusterBinding");
    const status = {
      status: {
        konnectorVersion: "v1.5.0",
        heartbeatInterval: "30s",
        lastHeartbeatTime: "2026-01-02T03:04:05Z",
        conditions: [{ type: "Ready", status: "True", lastTransitionTime: "2026-01-02T03:04:05Z" }],
      },
    };
    const viaMain = kubectlTry(kc(), [
      "patch",
      ...ref(binding),
      "--type=merge",
      "-p",
      JSON.stringify(status),
    ]);
    assert.equal(viaMain.status, 0, viaMain.stderr);
    assert.equal(
      kubectlJson(kc(), ["get", ...ref(binding)]).status,
      undefined,
      "status ignored on main resource",
    );
    const badCondition = { status: { conditions: [{ type: "Ready", status: "True" }] } };
    const refused = kubectlTry(kc(), [
      "patch",
      ...ref(binding),
      "--subresource=status",
      "--type=merge",
      "-p",
      JSON.stringify(badCondition),
    ]);
    assert.notEqual(refused.status, 0);
    assert.ok(refused.stderr.includes("status.conditions[0].lastTransitionTime"), refused.stderr);
    kubectl(kc(), [
      "patch",
      ...ref(binding),
      "--subresource=status",
      "--type=merge",
      "-p",
      JSON.stringify(status),
    ]);
    const columns = kubectl(kc(), ["get", ...ref(binding)]);
    assert.match(columns, /^NAME\s+KONNECTOR VERSION\s+LAST HEARTBEAT\s+READY\s+AGE$/m);
    assert.match(columns, /^cluster\s+v1\.5\.0\s+\S+\s+True\s+/m);
  });
});
