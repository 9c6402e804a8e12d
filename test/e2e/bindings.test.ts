import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { EngineEvent, Stack } from "@pulumi/pulumi/automation";
import { stringify } from "yaml";
import { LocalClusters } from "../../lib/local-clusters";
import { selectStack } from "../../lib/pulumi-runner";
import { repoRoot } from "../../lib/toolchain";
import { kubectl, kubectlApply, kubectlJson, kubectlTry } from "../helpers/kubectl";

const STACK = "bindings-e2e";
const CP = "control-plane";

/** The stack's config: three app clusters with different bound APIs (app-3 binds no claiming API). */
function stackConfig(stateDir: string, apps: string[]) {
  return {
    config: {
      "klutch:environment": "bindings",
      "klutch:controlPlane": { name: CP, infrastructure: "local" },
      "klutch:appClusters": apps.map((name) => ({
        name,
        infrastructure: "local",
        ...(name === "app-3" ? { apis: ["postgresqlinstances"] } : {}),
      })),
      "klutch:localClusters": { stateDir },
      "klutch:crossplane": { runLocally: true },
    },
  };
}

/**
 * Binding app clusters with a plain `pulumi up`: real local API servers, the real engine.
 * Each consumer kubeconfig the program makes is used for real requests against the
 * control plane: what it may do in its own namespace, and what it is refused elsewhere.
 */
describe("app cluster bindings on real clusters (e2e)", function () {
  this.timeout(15 * 60_000);

  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-bindings-"));
  const stateDir = path.join(work, "clusters");
  const stackFile = path.join(repoRoot, "stacks", `Pulumi.${STACK}.yaml`);
  const saved = { ...process.env };
  let clusters: LocalClusters;
  let stack: Stack;
  const kubeconfigs: Record<string, string> = {};

  const writeConfig = (apps: string[]) => fs.writeFileSync(stackFile, stringify(stackConfig(stateDir, apps)));
  const cp = () => clusters.kubeconfigPath(CP);

  before(async () => {
    process.env.KLUTCH_LOCAL_DIR = stateDir;
    process.env.PULUMI_BACKEND_URL = `file://${path.join(work, "state")}`;
    process.env.PULUMI_CONFIG_PASSPHRASE = "bindings-e2e-only";
    clusters = new LocalClusters(stateDir);
    await clusters.up([CP, "app-1", "app-2", "app-3", "app-4"]);
    writeConfig(["app-1", "app-2", "app-3"]);
    stack = await selectStack({ stack: STACK });
  });

  after(async () => {
    try {
      if (stack) {
        await stack.destroy().catch(() => undefined);
        await stack.workspace.removeStack(STACK).catch(() => undefined);
      }
      if (clusters) await clusters.down();
    } finally {
      process.env = saved;
      fs.rmSync(stackFile, { force: true });
      fs.rmSync(work, { recursive: true, force: true });
    }
  });

  it("`pulumi up` binds three app clusters and outputs a kubeconfig for each, as a secret", async () => {
    const res = await stack.up();
    assert.equal(res.summary.result, "succeeded");
    const out = res.outputs.appClusterKubeconfigs;
    assert.equal(out?.secret, true, "kubeconfigs are a secret output");
    const values = out?.value as Record<string, string>;
    assert.deepEqual(Object.keys(values).sort(), ["app-1", "app-2", "app-3"]);
    for (const [app, text] of Object.entries(values)) {
      const file = path.join(work, `${app}.kubeconfig`);
      fs.writeFileSync(file, text, { mode: 0o600 });
      kubeconfigs[app] = file;
    }
    // A data-service API as the dataservices package would install it (no provider runs here).
    const crd = {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "postgresqlinstances.anynines.com" },
      spec: {
        group: "anynines.com",
        scope: "Namespaced",
        names: { kind: "PostgresqlInstance", plural: "postgresqlinstances", singular: "postgresqlinstance" },
        versions: [
          {
            name: "v1",
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
          },
        ],
      },
    };
    assert.equal(kubectlApply(cp(), JSON.stringify(crd)).status, 0);
    kubectl(cp(), [
      "wait",
      "--for=condition=Established",
      "crd/postgresqlinstances.anynines.com",
      "--timeout=60s",
    ]);
  });

  it("records each binding on the control plane and installs the konnector on each app cluster", () => {
    for (const app of ["app-1", "app-2", "app-3"]) {
      const ns = `cluster-${app}`;
      kubectl(cp(), ["-n", ns, "get", "clusterbinding", "cluster"]);
      const requests = kubectl(cp(), ["-n", ns, "get", "apiserviceexportrequests", "-o", "name"])
        .trim()
        .split("\n");
      assert.equal(requests.length, app === "app-3" ? 1 : 4, `${app}: one request per bound API`);
      const appCfg = clusters.kubeconfigPath(app);
      for (const [kind, name] of [
        ["deployment", "konnector"],
        ["serviceaccount", "konnector"],
        ["secret", "kubeconfig"],
      ]) {
        kubectl(appCfg, ["-n", "klutch-bind", "get", kind!, name!]);
      }
      const bindings = kubectl(appCfg, [
        "-n",
        "klutch-bind",
        "get",
        "apiservicebindings",
        "-o",
        "name",
      ]).trim();
      assert.equal(bindings.split("\n").length, app === "app-3" ? 1 : 4);
    }
  });

  /** Whether a real request with the consumer's kubeconfig succeeds. */
  const allowed = (app: string, args: string[]) => {
    const r = kubectlTry(kubeconfigs[app]!, args);
    if (r.status !== 0)
      assert.match(r.stderr, /forbidden|Forbidden/, `${app} ${args.join(" ")}: ${r.stderr}`);
    return r.status === 0;
  };
  const instance = (ns: string, name: string) =>
    JSON.stringify({
      apiVersion: "anynines.com/v1",
      kind: "PostgresqlInstance",
      metadata: { name, namespace: ns },
    });

  it("each kubeconfig works in its own namespace: get, list, watch and create the bound resources", () => {
    for (const app of ["app-1", "app-2", "app-3"]) {
      const ns = `cluster-${app}`;
      const create = kubectlApply(kubeconfigs[app]!, instance(ns, `db-${app}`));
      assert.equal(create.status, 0, `${app} creates in its namespace: ${create.stderr}`);
      assert.ok(allowed(app, ["-n", ns, "get", "postgresqlinstances", `db-${app}`]));
      assert.ok(allowed(app, ["-n", ns, "get", "postgresqlinstances"]));
      assert.equal(
        kubectlTry(kubeconfigs[app]!, [
          "auth",
          "can-i",
          "watch",
          "postgresqlinstances.anynines.com",
          "-n",
          ns,
        ]).status,
        0,
      );
    }
  });

  it("and is refused for another consumer's namespace, unclaimed secrets and cluster-scoped writes", () => {
    // Another consumer's namespace.
    const other = kubectlApply(kubeconfigs["app-1"]!, instance("cluster-app-2", "intruder"));
    assert.notEqual(other.status, 0);
    assert.match(other.stderr, /forbidden/i);
    assert.ok(!allowed("app-1", ["-n", "cluster-app-2", "get", "postgresqlinstances"]));
    // Secrets: app-1 binds servicebindings, which claims secrets, so it may read them in its
    // own namespace; nowhere else. app-3 binds no claiming API and may read none.
    assert.ok(allowed("app-1", ["-n", "cluster-app-1", "get", "secrets"]));
    assert.ok(!allowed("app-1", ["-n", "cluster-app-2", "get", "secrets"]));
    assert.ok(!allowed("app-1", ["-n", "kube-system", "get", "secrets"]));
    assert.ok(!allowed("app-1", ["-n", "bind", "get", "secrets"]));
    assert.ok(!allowed("app-3", ["-n", "cluster-app-3", "get", "secrets"]));
    // Claimed secrets are the provider's: read, not write.
    assert.notEqual(
      kubectlTry(kubeconfigs["app-1"]!, ["auth", "can-i", "create", "secrets", "-n", "cluster-app-1"]).status,
      0,
    );
    // Cluster-scoped writes.
    assert.ok(!allowed("app-1", ["create", "namespace", "sneaky"]));
    assert.ok(!allowed("app-1", ["create", "clusterrole", "sneaky", "--verb=get", "--resource=pods"]));
    assert.ok(!allowed("app-2", ["delete", "crd", "postgresqlinstances.anynines.com"]));
  });

  /**
   * Entries of a preview that touch no cluster: the stack resource (its outputs list the
   * bindings) and the dynamic-provider host's default provider, which the engine re-diffs
   * whenever the program's set of registrations changes.
   */
  const isBookkeeping = (urn: string) =>
    urn.endsWith("pulumi:pulumi:Stack::klutch-bindings-e2e") ||
    urn.endsWith("pulumi:providers:pulumi-nodejs::default");

  /** The changes a real preview reports, as [op, urn] for everything that is not "same". */
  async function previewChanges(): Promise<[string, string][]> {
    const changes: [string, string][] = [];
    await stack.preview({
      onEvent: (e: EngineEvent) => {
        const m = e.resourcePreEvent?.metadata;
        if (m && m.op !== "same") changes.push([m.op, m.urn]);
      },
    });
    return changes;
  }

  /** The bridge's settings list every app cluster's connector, so they change in place. */
  const isBridgeSettings = (urn: string) =>
    /kubernetes:core\/v1:ConfigMap::[^:]*-bridge-settings-configmap$/.test(urn);
  const settingsText = () =>
    kubectlJson(cp(), ["-n", "klutch-network", "get", "configmap", "klutch-bridge-settings"]).data[
      "settings.json"
    ] as string;

  it("adding a fourth app cluster creates only its resources; removing it deletes only those", async () => {
    writeConfig(["app-1", "app-2", "app-3", "app-4"]);
    const adds = await previewChanges();
    assert.ok(adds.length > 10, `expected app-4's resources, got ${adds.length}`);
    assert.deepEqual(
      adds.filter(([, urn]) => isBridgeSettings(urn)).map(([op]) => op),
      ["update"],
      "the bridge settings are updated in place, not replaced",
    );
    for (const [op, urn] of adds) {
      // The stack outputs (kubeconfigs, bindings) are the stack resource's, which changes too.
      if (isBookkeeping(urn) || isBridgeSettings(urn)) continue;
      assert.equal(op, "create", `${op} ${urn}`);
      assert.match(urn, /app-4/, `only app-4's resources change: ${op} ${urn}`);
    }
    assert.equal((await stack.up()).summary.result, "succeeded");
    kubectl(clusters.kubeconfigPath("app-4"), ["-n", "klutch-bind", "get", "deployment", "konnector"]);
    assert.ok(JSON.parse(settingsText()).consumers["cluster-app-4"], "the bridge learns of app-4");

    writeConfig(["app-1", "app-2", "app-3"]);
    const removes = await previewChanges();
    assert.equal(
      removes.filter(([op]) => op === "delete").length,
      adds.filter(([op]) => op === "create").length,
    );
    for (const [op, urn] of removes) {
      if (isBookkeeping(urn) || isBridgeSettings(urn)) continue;
      assert.equal(op, "delete", `${op} ${urn}`);
      assert.match(urn, /app-4/, `only app-4's resources change: ${op} ${urn}`);
    }
    assert.equal((await stack.up()).summary.result, "succeeded");
    assert.equal(JSON.parse(settingsText()).consumers["cluster-app-4"], undefined);
    assert.notEqual(
      kubectlTry(cp(), ["get", "namespace", "cluster-app-4", "-o", "jsonpath={.status.phase}"]).stdout,
      "Active",
    );
    // The others are untouched: app-1's kubeconfig still works.
    assert.ok(allowed("app-1", ["-n", "cluster-app-1", "get", "postgresqlinstances"]));
  });
});
