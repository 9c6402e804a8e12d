import { strict as assert } from "node:assert";
import * as k8s from "@pulumi/kubernetes";
import { Crossplane, type CrossplaneArgs } from "./crossplane";
import { packageManifests, providerConfigManifests } from "../../lib/crossplane/packages";
import { mockPulumi, settle, SECRET_SIG } from "../../test/helpers/mocks";

const labels = { "klutch.anynines.com/environment": "test" };
const packages = {
  providerKubernetes: "xpkg.upbound.io/crossplane-contrib/provider-kubernetes:v1.3.1",
  providerAnynines: "public.ecr.aws/w5n9a2g2/klutch/provider-anynines:v1.5.0",
  functionPatchAndTransform: "xpkg.upbound.io/crossplane-contrib/function-patch-and-transform:v0.9.2",
  dataservicesConfiguration: "public.ecr.aws/w5n9a2g2/klutch/dataservices:v1.5.0",
};

describe("Crossplane packages (pure)", () => {
  it("pins every package and gives provider-kubernetes a known service account", () => {
    const m = packageManifests(packages, labels);
    assert.deepEqual(
      m.map((x) => `${x.kind}/${x.metadata.name}`),
      [
        "DeploymentRuntimeConfig/provider-kubernetes",
        "Provider/provider-kubernetes",
        "DeploymentRuntimeConfig/provider-anynines",
        "Provider/provider-anynines",
        "Function/function-patch-and-transform",
        "Configuration/anynines-dataservices",
      ],
    );
    assert.deepEqual(m[1]?.spec, {
      package: packages.providerKubernetes,
      runtimeConfigRef: { name: "provider-kubernetes" },
    });
    assert.equal(m[3]?.apiVersion, "pkg.crossplane.io/v1");
  });

  it("adds Klutch's function, under the name its compositions call, only when its package is given", () => {
    const functionKlutch = "registry.example.com/klutch/function-klutch:v0.1.0";
    const m = packageManifests({ ...packages, functionKlutch }, labels);
    assert.deepEqual(m.slice(packageManifests(packages, labels).length), [
      {
        apiVersion: "pkg.crossplane.io/v1",
        kind: "Function",
        metadata: { name: "function-klutch", labels },
        spec: { package: functionKlutch },
      },
    ]);
  });

  it("turns provider-kubernetes' watches on only when asked (the local stack's data services)", () => {
    const runtime = (o?: { providerKubernetesWatches?: boolean }) =>
      packageManifests(packages, labels, o)[0]!.spec as Record<string, any>;
    assert.equal(runtime().deploymentTemplate, undefined);
    assert.deepEqual(runtime({ providerKubernetesWatches: true }).deploymentTemplate.spec.template.spec, {
      containers: [{ name: "package-runtime", env: [{ name: "ENABLE_WATCHES", value: "true" }] }],
    });
    assert.deepEqual(runtime({ providerKubernetesWatches: true }).serviceAccountTemplate, {
      metadata: { name: "provider-kubernetes" },
    });
  });

  it("renders one anynines ProviderConfig per endpoint, reading credentials from Secrets", () => {
    const m = providerConfigManifests(
      [
        { name: "postgresql", serviceBrokerUrl: "https://sb", backupManagerUrl: "https://bm" },
        { name: "search", serviceBrokerUrl: "https://sb2" },
      ],
      "crossplane-system",
      labels,
    );
    assert.deepEqual(
      m.map((x) => `${x.apiVersion}/${x.metadata.name}`),
      [
        "kubernetes.crossplane.io/v1alpha1/kubernetes-provider",
        "dataservices.anynines.com/v1/postgresql-service-broker",
        "dataservices.anynines.com/v1/postgresql-backup-manager",
        "dataservices.anynines.com/v1/search-service-broker",
      ],
    );
    assert.deepEqual(m[0]?.spec, { credentials: { source: "InjectedIdentity" } });
    assert.deepEqual((m[2]?.spec as any).providerCredentials.password, {
      secretRef: {
        namespace: "crossplane-system",
        name: "postgresql-backup-manager-credentials",
        key: "password",
      },
    });
  });
});

describe("Crossplane component (mocks)", () => {
  const base = {
    namespace: "crossplane-system",
    version: "1.20.11",
    packages,
    labels,
  };

  it("installs the chart with --enable-ssa-claims, the packages, scoped RBAC and the ProviderConfigs", async () => {
    const run = mockPulumi({});
    const provider = new k8s.Provider("cp", {});
    new Crossplane("xp", {
      ...base,
      provider,
      chart: { repository: "https://charts.crossplane.io/stable" },
      anyninesServices: [{ name: "postgresql", serviceBrokerUrl: "https://sb" }],
      anyninesCredentials: { postgresql: { serviceBroker: { username: "u", password: "p" } } },
      installProviderConfigs: true,
      skipAwait: false,
    });
    await settle();
    const chart = run.ofType("kubernetes:helm.sh/v4:Chart");
    assert.equal(chart.length, 1);
    assert.equal(chart[0]?.inputs.chart, "crossplane");
    assert.equal(chart[0]?.inputs.version, "1.20.11");
    assert.deepEqual(chart[0]?.inputs.values.args, ["--enable-ssa-claims"]);
    assert.equal(chart[0]?.inputs.values.replicas, undefined, "the chart's own replica count");
    assert.equal(
      run.ofType("kubernetes:yaml/v2:ConfigGroup").length,
      0,
      "no CRDs applied by Pulumi on a real cluster",
    );

    const kinds = (api: string) =>
      run.resources
        .filter((r) => r.type === `kubernetes:${api}`)
        .map((r) => r.inputs.metadata.name as string)
        .sort();
    assert.deepEqual(kinds("pkg.crossplane.io/v1:Provider"), ["provider-anynines", "provider-kubernetes"]);
    assert.deepEqual(kinds("pkg.crossplane.io/v1:Function"), ["function-patch-and-transform"]);
    assert.deepEqual(kinds("pkg.crossplane.io/v1:Configuration"), ["anynines-dataservices"]);
    assert.deepEqual(kinds("pkg.crossplane.io/v1beta1:DeploymentRuntimeConfig"), [
      "provider-anynines",
      "provider-kubernetes",
    ]);
    assert.deepEqual(kinds("kubernetes.crossplane.io/v1alpha1:ProviderConfig"), ["kubernetes-provider"]);
    assert.deepEqual(kinds("dataservices.anynines.com/v1:ProviderConfig"), ["postgresql-service-broker"]);

    const secrets = run.ofType("kubernetes:core/v1:Secret");
    assert.equal(secrets.length, 1);
    assert.ok(SECRET_SIG in secrets[0]!.inputs.stringData, "credentials are a Pulumi secret");

    const bindings = run.ofType("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding");
    assert.equal(bindings.length, 1);
    assert.notEqual(bindings[0]?.inputs.roleRef.name, "cluster-admin");
    const role = run.ofType("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole")[0];
    for (const rule of role?.inputs.rules ?? []) {
      assert.ok(
        !rule.resources.includes("*") && !rule.verbs.includes("*") && !rule.apiGroups.includes("*"),
        "no wildcards",
      );
    }
  });

  it("on the operator's core (useInstalled): no chart, CRDs, upgrade guard or webhook clean-up; the packages, their RBAC and ProviderConfigs as anywhere", async () => {
    const run = mockPulumi({});
    const provider = new k8s.Provider("cp", {});
    new Crossplane("xp", {
      ...base,
      provider,
      chart: { repository: "https://charts.crossplane.io/stable" },
      crdsPath: "/cache/crossplane/cluster/crds",
      kubeconfig: "apiVersion: v1",
      anyninesServices: [{ name: "postgresql", serviceBrokerUrl: "https://sb" }],
      anyninesCredentials: { postgresql: { serviceBroker: { username: "u", password: "p" } } },
      installProviderConfigs: true,
      skipAwait: false,
      useInstalled: true,
    });
    await settle();
    assert.deepEqual(run.ofType("kubernetes:helm.sh/v4:Chart"), []);
    assert.deepEqual(run.ofType("kubernetes:yaml/v2:ConfigGroup"), []);
    assert.deepEqual(
      run.ofType("pulumi-nodejs:dynamic:Resource"),
      [],
      "guard and webhook clean-up are the core owner's",
    );
    const names = (type: string) =>
      run
        .ofType(type)
        .map((r) => r.inputs.metadata.name as string)
        .sort();
    assert.deepEqual(names("kubernetes:pkg.crossplane.io/v1:Provider"), [
      "provider-anynines",
      "provider-kubernetes",
    ]);
    assert.deepEqual(names("kubernetes:dataservices.anynines.com/v1:ProviderConfig"), [
      "postgresql-service-broker",
    ]);
    assert.deepEqual(names("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding"), [
      "klutch:provider-kubernetes",
    ]);
  });

  it("on local clusters uses the local chart, applies the CRDs itself, skips ProviderConfigs and runs no core pod", async () => {
    const run = mockPulumi({});
    const provider = new k8s.Provider("cp", {});
    new Crossplane("xp", {
      ...base,
      provider,
      chart: { path: "/cache/crossplane/cluster/charts/crossplane" },
      crdsPath: "/cache/crossplane/cluster/crds",
      anyninesServices: [],
      installProviderConfigs: false,
      skipAwait: true,
      runLocally: true,
    });
    await settle();
    const chart = run.ofType("kubernetes:helm.sh/v4:Chart")[0];
    assert.equal(chart?.inputs.chart, "/cache/crossplane/cluster/charts/crossplane");
    assert.equal(chart?.inputs.skipAwait, true);
    // The local process is the core: the chart's core and RBAC manager never run a pod.
    assert.equal(chart?.inputs.values.replicas, 0);
    assert.deepEqual(chart?.inputs.values.rbacManager, { replicas: 0 });
    assert.deepEqual(run.ofType("kubernetes:yaml/v2:ConfigGroup")[0]?.inputs.files, [
      "/cache/crossplane/cluster/crds/*.yaml",
    ]);
    assert.equal(run.resources.filter((r) => r.type.endsWith(":ProviderConfig")).length, 0);
    assert.equal(run.ofType("kubernetes:core/v1:Secret").length, 0);
    const provs = run.ofType("kubernetes:pkg.crossplane.io/v1:Provider");
    assert.equal(provs[0]?.inputs.metadata.annotations["pulumi.com/skipAwait"], "true");
  });

  it("on a local node installs the project's Functions from the local registry, trusting its CA, and waits until each is Healthy", async () => {
    const run = mockPulumi({});
    const provider = new k8s.Provider("cp", {});
    const reference = "172.30.0.5:5000/klutch/function-klutch:v0.1.0-g0123456789ab";
    new Crossplane("xp", {
      ...base,
      provider,
      chart: { path: "/cache/crossplane/cluster/charts/crossplane" },
      anyninesServices: [],
      installProviderConfigs: false,
      skipAwait: false,
      localPackages: {
        registry: "172.30.0.5:5000",
        pushRegistry: "127.0.0.1:5000",
        references: { "function-klutch": reference },
        caBundle: "PEM",
      },
    });
    await settle();
    // The chart mounts the bundle for the package manager (CA_BUNDLE_PATH).
    const ca = run.ofType("kubernetes:core/v1:ConfigMap");
    assert.deepEqual(
      ca.map((c) => [c.inputs.metadata.namespace, c.inputs.metadata.name, c.inputs.data]),
      [["crossplane-system", "klutch-registry-ca", { "ca-bundle.crt": "PEM" }]],
    );
    const chart = run.ofType("kubernetes:helm.sh/v4:Chart")[0];
    assert.deepEqual(chart?.inputs.values.registryCaBundleConfig, {
      name: "klutch-registry-ca",
      key: "ca-bundle.crt",
    });
    const fn = run
      .ofType("kubernetes:pkg.crossplane.io/v1:Function")
      .find((f) => f.inputs.metadata.name === "function-klutch");
    assert.equal(fn?.inputs.spec.package, reference);
    assert.equal(fn?.inputs.metadata.annotations["pulumi.com/waitFor"], "condition=Healthy");
    // The upstream Function that cannot be pulled here is still applied only.
    const pt = run
      .ofType("kubernetes:pkg.crossplane.io/v1:Function")
      .find((f) => f.inputs.metadata.name === "function-patch-and-transform");
    assert.equal(pt?.inputs.metadata.annotations["pulumi.com/skipAwait"], "true");
  });

  /** Crossplane on a cluster that pulls (the chart's repository, ProviderConfigs installed), with `extra`. */
  const onACluster = (extra: Partial<CrossplaneArgs> = {}) => {
    const run = mockPulumi({});
    new Crossplane("xp", {
      ...base,
      provider: new k8s.Provider("cp", {}),
      chart: { repository: "https://charts.crossplane.io/stable" },
      anyninesServices: [],
      installProviderConfigs: true,
      skipAwait: false,
      ...extra,
    });
    return run;
  };

  it("elsewhere: no registry CA, no local Functions; without a mirror, the chart's own image at the version and no ImageConfig", async () => {
    const run = onACluster();
    await settle();
    assert.equal(run.ofType("kubernetes:core/v1:ConfigMap").length, 0);
    assert.equal(
      run.ofType("kubernetes:helm.sh/v4:Chart")[0]?.inputs.values.registryCaBundleConfig,
      undefined,
    );
    assert.deepEqual(run.ofType("kubernetes:helm.sh/v4:Chart")[0]?.inputs.values.image, { tag: "v1.20.11" });
    assert.equal(run.ofType("kubernetes:pkg.crossplane.io/v1beta1:ImageConfig").length, 0);
  });

  it("with an operator's mirror: core's image from it and one ImageConfig that sends each upstream registry's packages (and their dependencies) there", async () => {
    const run = onACluster({
      image: { repository: "mirror.example.com/crossplane/crossplane", tag: "v1.20.11" },
      registryMirror: { registry: "mirror.example.com/", upstreams: ["public.ecr.aws", "xpkg.upbound.io"] },
    });
    await settle();
    assert.deepEqual(run.ofType("kubernetes:helm.sh/v4:Chart")[0]?.inputs.values.image, {
      repository: "mirror.example.com/crossplane/crossplane",
      tag: "v1.20.11",
    });
    const configs = run.ofType("kubernetes:pkg.crossplane.io/v1beta1:ImageConfig");
    assert.equal(configs.length, 1);
    assert.deepEqual(configs[0]?.inputs.spec, {
      // With the slash, so that xpkg.upbound.io.example.net is not matched.
      matchImages: [
        { type: "Prefix", prefix: "public.ecr.aws/" },
        { type: "Prefix", prefix: "xpkg.upbound.io/" },
      ],
      rewriteImage: { prefix: "mirror.example.com/" },
    });
  });
});
