import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { klutchProgram } from "../programs/stack/program";
import { ExistingCluster } from "../clusters/existing-cluster";
import { LocalCluster } from "../clusters/local-cluster";
import { fakeLocalStateDir } from "../test/helpers/kubeconfig";
import { mockPulumi, valueOf, settle, SECRET_SIG, SECRET_MARKER } from "../test/helpers/mocks";

const ENV_LABEL = "klutch.anynines.com/environment";
// Pulumi's wire signature for secret values (sdk/nodejs/runtime/rpc.ts specialSigKey/specialSecretSig).

function localConfig(stateDir: string, apps = ["app-1", "app-2"]) {
  return {
    environment: "local",
    controlPlane: { name: "control-plane", infrastructure: "local" },
    appClusters: apps.map((name) => ({ name, infrastructure: "local" })),
    localClusters: { stateDir },
  };
}

describe("KlutchEnvironment (mocks)", () => {
  it("creates one provider per cluster and exactly the namespaces later components use", async () => {
    const stateDir = fakeLocalStateDir(["control-plane", "app-1", "app-2"]);
    const run = mockPulumi(localConfig(stateDir));
    const outputs = klutchProgram();
    const namespaces = await valueOf(outputs.namespaces as pulumi.Output<Record<string, string[]>>);
    await settle();

    assert.deepEqual(namespaces, {
      "control-plane": ["crossplane-system", "bind", "klutch-network"],
      "app-1": ["klutch-bind"],
      "app-2": ["klutch-bind"],
    });
    assert.equal(run.ofType("klutch:index:Environment").length, 1);
    assert.deepEqual(
      run.ofType("klutch:cluster:LocalCluster").map((r) => r.name),
      ["local-control-plane", "local-app-1", "local-app-2"],
    );
    // One per cluster, plus the bridge settings' own (mutable ConfigMaps) on the control plane.
    assert.equal(run.ofType("pulumi:providers:kubernetes").length, 4);
    assert.equal(run.ofType("klutch:cluster:ExistingCluster").length, 0);

    // The bindings add each app cluster's consumer namespace on the control plane.
    const consumerNs = run.ofType("kubernetes:core/v1:Namespace").filter((n) => n.name.includes("-binding-"));
    assert.deepEqual(
      consumerNs.map((n) => [n.inputs.metadata.name, /local-control-plane-provider/.test(n.provider ?? "")]),
      [
        ["cluster-app-1", true],
        ["cluster-app-2", true],
      ],
    );
    const ns = run.ofType("kubernetes:core/v1:Namespace").filter((n) => !n.name.includes("-binding-"));
    assert.equal(ns.length, 5, "exactly five namespaces: three on the control plane, one per app cluster");
    for (const n of ns) {
      assert.equal(n.inputs.metadata.labels[ENV_LABEL], "local");
      assert.equal(n.inputs.metadata.labels["app.kubernetes.io/managed-by"], "pulumi");
    }
    // Each namespace is created through its own cluster's provider.
    const byName = Object.fromEntries(ns.map((n) => [n.name, n.provider ?? ""]));
    assert.match(byName["local-control-plane-crossplane-system"] ?? "", /local-control-plane-provider/);
    assert.match(byName["local-control-plane-bind"] ?? "", /local-control-plane-provider/);
    assert.match(byName["local-control-plane-klutch-network"] ?? "", /local-control-plane-provider/);
    assert.match(byName["local-app-1-klutch-bind"] ?? "", /local-app-1-provider/);
    assert.match(byName["local-app-2-klutch-bind"] ?? "", /local-app-2-provider/);
    // Crossplane goes to the control plane only; app clusters get their namespace and what
    // their binding puts there (the konnector), nothing else.
    assert.equal(run.ofType("klutch:crossplane:Crossplane").length, 1);
    const onClusters = run.resources.filter((r) => r.type.startsWith("kubernetes:"));
    for (const r of onClusters) {
      if (r.type === "kubernetes:core/v1:Namespace") continue;
      if (/-binding-(konnector|binding-|apiservicebindings)|^local-app-\d-binding-admission-/.test(r.name)) {
        assert.match(r.provider ?? "", /local-app-\d-provider/, `${r.type} ${r.name} is on its app cluster`);
        continue;
      }
      assert.match(
        r.provider ?? "",
        // The bridge settings' provider is the control plane's second one (mutable ConfigMaps).
        /local-(control-plane|bridge-settings)-provider/,
        `${r.type} ${r.name} is not on the control plane`,
      );
    }
    const expectedTypes = new Set([
      "klutch:index:Environment",
      "klutch:cluster:LocalCluster",
      "pulumi:providers:kubernetes",
      "kubernetes:core/v1:Namespace",
      "klutch:crossplane:Crossplane",
      "kubernetes:helm.sh/v4:Chart",
      // Crossplane's CRDs, applied by Pulumi for the local process (no init container runs).
      "kubernetes:yaml/v2:ConfigGroup",
      "kubernetes:pkg.crossplane.io/v1beta1:DeploymentRuntimeConfig",
      "kubernetes:pkg.crossplane.io/v1:Provider",
      "kubernetes:pkg.crossplane.io/v1:Function",
      "kubernetes:pkg.crossplane.io/v1:Configuration",
      "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole",
      "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding",
      "kubernetes:kubernetes.crossplane.io/v1alpha1:ProviderConfig",
      "klutch:network:ConnectorApi",
      "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition",
      "kubernetes:apiextensions.crossplane.io/v1:CompositeResourceDefinition",
      "kubernetes:apiextensions.crossplane.io/v1:Composition",
      // klutch-bind: backend, Dex, export templates and one binding per app cluster.
      "klutch:bind:OidcProvider",
      "klutch:bind:KlutchBindBackend",
      "klutch:bind:ExportedApi",
      "klutch:bind:AppClusterBinding",
      "pulumi-nodejs:dynamic/klutch:RandomKey",
      "kubernetes:core/v1:Secret",
      "kubernetes:core/v1:ServiceAccount",
      "kubernetes:core/v1:Service",
      "kubernetes:core/v1:PersistentVolumeClaim",
      "kubernetes:apps/v1:Deployment",
      "kubernetes:networking.k8s.io/v1:Ingress",
      "kubernetes:rbac.authorization.k8s.io/v1:Role",
      "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
      "kubernetes:example-backend.klutch.anynines.com/v1alpha1:APIServiceExportTemplate",
      "kubernetes:klutch.anynines.com/v1alpha1:ClusterBinding",
      "pulumi-nodejs:dynamic/klutch:ExportRequest",
      "kubernetes:klutch.anynines.com/v1alpha1:APIServiceBinding",
      // ServiceBinding admission: on the control plane and each app cluster.
      "klutch:dataservices:BindingAdmission",
      "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy",
      "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding",
      // The Crossplane bridge's identity and its settings ConfigMap.
      "klutch:bridge:BridgeIdentity",
      "klutch:bridge:BridgeSettings",
      "kubernetes:core/v1:ConfigMap",
      // Teardown: Crossplane's own webhook configurations after it; every claim before all.
      "pulumi-nodejs:dynamic/klutch:CrossplaneWebhookConfigurations",
      // Before the chart: refuses a Crossplane more than one minor from the running one.
      "pulumi-nodejs:dynamic/klutch:CrossplaneUpgradeGuard",
      "pulumi-nodejs:dynamic/klutch:TeardownDrain",
    ]);
    // One XRD; NOOP and the proxy (Klutch's default), function-less: a local cluster pulls no
    // package, function-patch-and-transform included.
    assert.equal(
      run.ofType("kubernetes:apiextensions.crossplane.io/v1:CompositeResourceDefinition").length,
      1,
    );
    // Where bindings are written, one admission each; no network-aware binding is offered here.
    const admissions = run.ofType("kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy");
    assert.deepEqual(
      admissions.map((a) => a.provider?.match(/local-(control-plane|app-\d)-provider/)?.[1]).sort(),
      ["app-1", "app-2", "control-plane"],
    );
    for (const a of admissions) assert.match(a.inputs.spec.validations[0].expression, / in \[\]/);
    const compositions = run.ofType("kubernetes:apiextensions.crossplane.io/v1:Composition");
    assert.deepEqual(compositions.map((c) => c.inputs.metadata.name).sort(), [
      "xtcpconnections-noop",
      "xtcpconnections-proxy",
    ]);
    for (const c of compositions) assert.equal(c.inputs.spec.mode, "Resources");
    assert.deepEqual(
      run.resources.filter((r) => !expectedTypes.has(r.type)).map((r) => r.type),
      [],
    );
  });

  it("gives the Crossplane bridge an identity and each app cluster's connector settings by consumer namespace", async () => {
    const stateDir = fakeLocalStateDir(["control-plane", "app-1", "app-2"]);
    const config = localConfig(stateDir) as Record<string, any>;
    config.appClusters[0].networkConnector = {
      implementation: "proxy",
      serviceType: "NodePort",
      portRange: { from: 31000, to: 31099 },
      dedicatedCpus: 2,
    };
    config.appClusters[1].networkConnector = { implementation: "wireguard" };
    const run = mockPulumi(config);
    klutchProgram();
    await settle();

    const maps = run
      .ofType("kubernetes:core/v1:ConfigMap")
      .filter((c) => c.name === "local-bridge-settings-configmap");
    assert.equal(maps.length, 1);
    // Its own provider, with mutable ConfigMaps: a changed app cluster list updates it in place.
    assert.match(maps[0]?.provider ?? "", /local-bridge-settings-provider/);
    const settingsProvider = run
      .ofType("pulumi:providers:kubernetes")
      .filter((p) => p.name === "local-bridge-settings-provider");
    assert.equal(settingsProvider.length, 1);
    assert.equal(settingsProvider[0]?.inputs.enableConfigMapMutable, "true");
    assert.deepEqual(maps[0]?.inputs.metadata.name, "klutch-bridge-settings");
    assert.deepEqual(maps[0]?.inputs.metadata.namespace, "klutch-network");
    assert.deepEqual(JSON.parse(maps[0]?.inputs.data["settings.json"]), {
      version: 1,
      consumers: {
        "cluster-app-1": {
          appCluster: "app-1",
          implementation: "proxy",
          proxy: {
            serviceType: "NodePort",
            portRange: { from: 31000, to: 31099 },
            dedicatedCpus: 2,
            exposure: { sourceRanges: ["127.0.0.0/8"], internal: true, public: false },
          },
        },
        // The tunnel's address for app-2's client and where the bridge publishes its flows.
        "cluster-app-2": {
          appCluster: "app-2",
          implementation: "wireguard",
          wireguard: {
            tunnelCidr: "100.96.0.0/24",
            clientAddress: "100.96.0.2",
            flows: { namespace: "klutch-network", name: "local-wireguard-gateway-flows" },
            clientHost: "local-wireguard-client.klutch-wireguard.svc.cluster.local",
          },
        },
      },
    });
    // The flows ConfigMap exists, empty (the bridge's groups own its keys), and the client's
    // headless Service names the host every connection of app-2 is reached through.
    const flows = run
      .ofType("kubernetes:core/v1:ConfigMap")
      .filter((c) => c.inputs.metadata?.name === "local-wireguard-gateway-flows");
    assert.equal(
      flows.length,
      1,
      JSON.stringify(run.ofType("kubernetes:core/v1:ConfigMap").map((c) => [c.name, c.inputs.metadata])),
    );
    assert.equal(flows[0]?.inputs.data, undefined);
    const headless = run
      .ofType("kubernetes:core/v1:Service")
      .filter((c) => c.inputs.metadata?.name === "local-wireguard-client");
    assert.equal(headless[0]?.inputs.spec.clusterIP, "None");
    assert.equal(run.ofType("klutch:bridge:BridgeIdentity").length, 1);
    const reader = run
      .ofType("kubernetes:rbac.authorization.k8s.io/v1:Role")
      .filter((r) => r.name === "local-bridge-identity-coordination-role");
    assert.equal(reader[0]?.inputs.metadata.namespace, "klutch-network");
    assert.deepEqual(reader[0]?.inputs.rules, [
      {
        apiGroups: [""],
        resources: ["configmaps"],
        resourceNames: ["klutch-bridge-settings"],
        verbs: ["get"],
      },
      { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create"] },
      {
        apiGroups: ["coordination.k8s.io"],
        resources: ["leases"],
        resourceNames: ["klutch-bridge"],
        verbs: ["get", "update"],
      },
    ]);
  });

  it("registers the teardown drain after everything that must outlive it, so a destroy deletes it first", async () => {
    const stateDir = fakeLocalStateDir(["control-plane", "app-1", "app-2"]);
    // What the drain must outlive registers slowly: the drain starts only after each is done
    // if, and only if, it records them as dependencies (the SDK awaits their URNs).
    const mustOutlive = (type: string, name: string) =>
      /CompositeResourceDefinition|CustomResourceDefinition|Composition$|helm|pkg\.crossplane\.io|ClusterRole$/.test(
        type,
      ) || /konnector/.test(name);
    const run = mockPulumi(localConfig(stateDir), "test", {
      delayMs: (args) => (mustOutlive(args.type, args.name) ? 100 : 0),
    });
    klutchProgram();
    const at = (event: string) => run.events.indexOf(event);
    const started = "start pulumi-nodejs:dynamic/klutch:TeardownDrain local-teardown-drain";
    for (let i = 0; i < 200 && at(started) < 0; i++) await new Promise((r) => setTimeout(r, 50));
    await settle();
    const drain = at(started);
    assert.ok(drain > 0, "the drain is registered");
    const outlive = run.resources.filter((r) => mustOutlive(r.type, r.name));
    assert.ok(outlive.length >= 8, outlive.map((r) => r.name).join(", "));
    for (const r of outlive)
      assert.ok(
        at(`done ${r.type} ${r.name}`) < drain,
        `${r.type} ${r.name} is done before the drain registers`,
      );
    // Its state holds the kubeconfigs only as secrets.
    const [registered] = run.ofType("pulumi-nodejs:dynamic/klutch:TeardownDrain");
    assert.deepEqual(
      Object.keys(registered?.inputs ?? {})
        .filter((k) => k !== "__provider")
        .sort(),
      ["appClusterKubeconfigs", "kubeconfig", "timeoutSeconds"],
    );
    for (const key of ["appClusterKubeconfigs", "kubeconfig"])
      assert.equal(registered?.inputs[key]?.[SECRET_SIG], SECRET_MARKER, `${key} is a secret`);
  });

  it("passes each kubeconfig to its provider as a secret", async () => {
    const stateDir = fakeLocalStateDir(["control-plane", "app-1"]);
    const run = mockPulumi(localConfig(stateDir, ["app-1"]));
    klutchProgram();
    await settle();
    const providers = run.ofType("pulumi:providers:kubernetes");
    // One per cluster, and the control plane's second one for the bridge settings.
    assert.deepEqual(providers.map((p) => p.name).sort(), [
      "local-app-1-provider",
      "local-bridge-settings-provider",
      "local-control-plane-provider",
    ]);
    for (const p of providers) {
      const cluster =
        p.name === "local-bridge-settings-provider"
          ? "control-plane"
          : p.name.replace(/^local-|-provider$/g, "");
      const expected = fs.readFileSync(path.join(stateDir, cluster, "kubeconfig"), "utf8");
      // A secret reaches the engine wrapped in Pulumi's secret envelope, never as plain text.
      assert.deepEqual(p.inputs.kubeconfig, { [SECRET_SIG]: SECRET_MARKER, value: expected });
      // Provider inputs travel as strings.
      assert.equal(p.inputs.enableServerSideApply, "true");
    }
  });

  it("registers no resource when the config is invalid", () => {
    const stateDir = fakeLocalStateDir(["control-plane"]);
    const run = mockPulumi({ ...localConfig(stateDir, ["app-1"]), environment: "Not Valid" });
    assert.throws(
      () => klutchProgram(),
      (err: Error) => {
        assert.match(err.message, /klutch:environment: must be a DNS-1123 label/);
        assert.match(
          err.message,
          /klutch:appClusters\[0\]\.infrastructure: kubeconfig file .* does not exist/,
        );
        return true;
      },
    );
    assert.equal(run.resources.length, 0);
  });

  it("registers no resource when an aws cluster asks for more zones than its region has", () => {
    const stateDir = fakeLocalStateDir(["control-plane"]);
    const run = mockPulumi({
      ...localConfig(stateDir, []),
      appClusters: [
        {
          name: "eks",
          infrastructure: "aws",
          aws: { region: "us-west-1", availabilityZoneCount: 3 },
          network: { nodeCidr: "10.1.0.0/16" },
        },
      ],
    });
    assert.throws(
      () => klutchProgram(),
      /klutch:appClusters\[0\]\.aws\.availabilityZoneCount: us-west-1 has 2 availability zone\(s\)/,
    );
    assert.equal(run.resources.length, 0);
  });
});

describe("cluster components keep kubeconfigs secret", () => {
  it("LocalCluster.kubeconfig is a secret output", async () => {
    const stateDir = fakeLocalStateDir(["c1"]);
    mockPulumi({});
    const cluster = new LocalCluster("c1", {
      clusterName: "c1",
      kubeconfigPath: path.join(stateDir, "c1", "kubeconfig"),
    });
    assert.equal(await pulumi.isSecret(cluster.kubeconfig), true);
  });

  it("ExistingCluster.kubeconfig is a secret output and keeps the context", async () => {
    const stateDir = fakeLocalStateDir(["c2"]);
    const run = mockPulumi({});
    const cluster = new ExistingCluster("c2", {
      clusterName: "c2",
      kubeconfigPath: path.join(stateDir, "c2", "kubeconfig"),
      context: "c2",
    });
    assert.equal(await pulumi.isSecret(cluster.kubeconfig), true);
    await settle();
    assert.equal(run.ofType("pulumi:providers:kubernetes")[0]?.inputs.context, "c2");
  });
});
