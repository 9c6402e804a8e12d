import { strict as assert } from "node:assert";
import { environmentSchema } from "../config/schema";
import type { CrossplanePlan } from "../../lib/crossplane/crossplane-plan";
import { planEnvironment } from "./environment-plan";
import { KLUTCH_FUNCTION } from "../../lib/connector-api/compositions";

function config(appClusters: unknown[], controlPlane: Record<string, unknown> = { infrastructure: "local" }) {
  return environmentSchema.parse({
    environment: "t",
    controlPlane: { name: "cp", ...controlPlane },
    appClusters,
  });
}

const PROCESS: CrossplanePlan = {
  run: { kind: "process" },
  version: "1.20.11",
  toolchainChart: true,
  packagesPullable: false,
};
const PACKAGES = {
  registry: "172.30.0.5:5000",
  pushRegistry: "127.0.0.1:5000",
  references: { "function-klutch": "172.30.0.5:5000/klutch/function-klutch:v0.1.0-gabc" },
  caBundle: "-----BEGIN CERTIFICATE-----\n",
};
const NODE: CrossplanePlan = {
  run: {
    kind: "node",
    image: { repository: "xpkg.upbound.io/crossplane/crossplane", tag: "v2.4.0" },
    packages: PACKAGES,
    node: { address: "172.30.0.6", images: { wireguard: "klutch.local/wireguard:1.0-abc" } },
  },
  version: "2.4.0",
  toolchainChart: true,
  packagesPullable: false,
};
const CLUSTER: CrossplanePlan = {
  run: { kind: "cluster" },
  version: "2.4.0",
  toolchainChart: false,
  packagesPullable: true,
};

describe("the environment's plan (pure)", () => {
  it("local: upstream images are applied, not awaited; the compositions are function-less; core runs as a process", () => {
    const plan = planEnvironment(config([{ name: "app", infrastructure: "local" }]), PROCESS);
    assert.equal(plan.skipAwaitUpstream, true);
    assert.equal(plan.connectorApi.compositionMode, "Resources");
    assert.deepEqual(plan.crossplane, {
      installProviderConfigs: false,
      skipAwait: true,
      runLocally: true,
      useInstalled: false,
    });
    assert.deepEqual(
      plan.bind.appClusters.map((a) => [a.name, a.awaitExports]),
      [["app", false]],
    );
    assert.deepEqual(
      plan.namespaces.map((n) => `${n.cluster}/${n.namespace}`),
      ["cp/crossplane-system", "cp/bind", "cp/klutch-network", "app/klutch-bind"],
    );
    assert.equal(plan.labels["klutch.anynines.com/environment"], "t");
  });

  it("a local node runs core from its image, pinned, in the node's network, and awaits it; Klutch's function from the local registry composes", () => {
    const plan = planEnvironment(config([{ name: "app", infrastructure: "local" }]), NODE);
    assert.equal(plan.connectorApi.compositionMode, "Pipeline");
    assert.deepEqual(plan.connectorApi.pipelineFunction, KLUTCH_FUNCTION);
    assert.deepEqual(plan.crossplane, {
      installProviderConfigs: false,
      skipAwait: false,
      runLocally: false,
      useInstalled: false,
      node: {
        image: { repository: "xpkg.upbound.io/crossplane/crossplane", tag: "v2.4.0", pullPolicy: "Never" },
        coreArgs: ["--enable-realtime-compositions=false", "--poll-interval=30s"],
        hostNetwork: true,
      },
      localPackages: PACKAGES,
    });
  });

  it("a local node ships the APIs as packages on its registry, depending on Klutch's function by source, any version", () => {
    const plan = planEnvironment(config([{ name: "app", infrastructure: "local" }]), NODE);
    assert.deepEqual(plan.connectorApi.packaging, {
      registry: { address: "172.30.0.5:5000", pushAddress: "127.0.0.1:5000", caBundle: PACKAGES.caBundle },
      dependsOn: [{ function: "172.30.0.5:5000/klutch/function-klutch", version: ">=v0.0.0-0" }],
      looseDeclarations: "retained",
    });
    const process = planEnvironment(config([{ name: "app", infrastructure: "local" }]), PROCESS);
    assert.equal(process.connectorApi.packaging, undefined, "a core without a node has no registry");
  });

  it("the local data-service backend runs where the node holds a PostgreSQL image, and nowhere else", () => {
    const apps = config([{ name: "app", infrastructure: "local" }]);
    assert.equal(planEnvironment(apps, NODE).localDataServices, undefined, "this node holds none");
    if (NODE.run.kind !== "node") throw new Error("NODE is a node run");
    const withPostgres: CrossplanePlan = {
      ...NODE,
      run: { ...NODE.run, node: { images: { postgres: "klutch.local/postgres:15-abc" } } },
    };
    assert.deepEqual(planEnvironment(apps, withPostgres).localDataServices, {
      postgresImage: "klutch.local/postgres:15-abc",
    });
    assert.equal(planEnvironment(apps, PROCESS).localDataServices, undefined);
    assert.equal(planEnvironment(apps, CLUSTER).localDataServices, undefined);
  });

  it("an existing cluster awaits everything and uses Pipeline compositions", () => {
    const cp = { infrastructure: "existing", kubeconfig: { path: "k" } };
    const plan = planEnvironment(
      config([{ name: "app", infrastructure: "existing", kubeconfig: { path: "k" } }], cp),
      CLUSTER,
    );
    assert.equal(plan.skipAwaitUpstream, false);
    assert.equal(plan.connectorApi.compositionMode, "Pipeline");
    assert.equal(plan.connectorApi.pipelineFunction, undefined, "function-patch-and-transform, Klutch's pin");
    assert.deepEqual(plan.crossplane, {
      installProviderConfigs: true,
      skipAwait: false,
      runLocally: false,
      useInstalled: false,
    });
    assert.equal(
      plan.connectorApi.packaging,
      undefined,
      "no registry of the environment's own: loose objects",
    );
    assert.equal(plan.bind.appClusters[0]?.awaitExports, true);
  });

  it("on the operator's Crossplane (useInstalled): its namespace is used, not made (nor deleted by destroy); the packages installed as anywhere", () => {
    const cp = { infrastructure: "existing", kubeconfig: { path: "k" } };
    const env = config([{ name: "app", infrastructure: "existing", kubeconfig: { path: "k" } }], cp);
    const namespaces = (p: ReturnType<typeof planEnvironment>) =>
      p.namespaces.map((n) => `${n.cluster}/${n.namespace}`);
    assert.ok(namespaces(planEnvironment(env, CLUSTER)).includes("cp/crossplane-system"));
    const installed = planEnvironment(
      { ...env, crossplane: { ...env.crossplane, useInstalled: true } },
      { ...CLUSTER, run: { kind: "installed" } },
    );
    assert.deepEqual(namespaces(installed), ["cp/bind", "cp/klutch-network", "app/klutch-bind"]);
    assert.deepEqual(installed.crossplane, {
      installProviderConfigs: true,
      skipAwait: false,
      runLocally: false,
      useInstalled: true,
    });
  });

  it("the network-aware bindings for a8s where packages are pulled and Klutch's function is given", () => {
    const existing = { infrastructure: "existing", kubeconfig: { path: "k" } };
    const app = [{ name: "app", infrastructure: "existing", kubeconfig: { path: "k" } }];
    const withFunction = (cp: Record<string, unknown>, plan: CrossplanePlan) =>
      planEnvironment(
        environmentSchema.parse({
          environment: "t",
          controlPlane: { name: "cp", ...cp },
          appClusters: app,
          crossplane: { functionKlutch: "registry.example.com/klutch/function-klutch:v0.1.0" },
        }),
        plan,
      );
    assert.equal(withFunction(existing, CLUSTER).a8sNetworkBindings, true);
    assert.equal(
      planEnvironment(config(app, existing), CLUSTER).a8sNetworkBindings,
      undefined,
      "no function",
    );
    // Where nothing is pulled the local backend serves bindings (crossplane-plan.ts refuses the setting there).
    assert.equal(withFunction({ infrastructure: "local" }, NODE).a8sNetworkBindings, undefined);
  });

  it("the network-aware bindings for a9s only where some anynines service broker is configured too", () => {
    const existing = { name: "cp", infrastructure: "existing", kubeconfig: { path: "k" } };
    const plan = (anyninesServices: unknown[]) =>
      planEnvironment(
        environmentSchema.parse({
          environment: "t",
          controlPlane: existing,
          appClusters: [{ name: "app", infrastructure: "existing", kubeconfig: { path: "k" } }],
          crossplane: {
            functionKlutch: "registry.example.com/klutch/function-klutch:v0.1.0",
            anyninesServices,
          },
        }),
        CLUSTER,
      );
    assert.equal(plan([]).a9sNetworkBindings, undefined);
    assert.equal(
      plan([{ name: "messaging", serviceBrokerUrl: "https://a9s-mq-sb.example.com" }]).a9sNetworkBindings,
      true,
    );
  });

  it("offers the default implementation and every one in use, never NOOP; lists nodes only for a NodePort proxy", () => {
    const apps = (connectors: unknown[]) =>
      connectors.map((networkConnector, i) => ({ name: `a${i}`, infrastructure: "local", networkConnector }));
    const wg = planEnvironment(
      config(apps([{ implementation: "wireguard" }, { implementation: "noop" }])),
      PROCESS,
    );
    assert.deepEqual(wg.connectorApi.implementations, ["proxy", "wireguard"]);
    assert.equal(wg.connectorApi.defaultImplementation, "proxy");
    assert.equal(wg.bridge.listNodes, false);
    const nodePort = planEnvironment(
      config(apps([{ implementation: "proxy", serviceType: "NodePort" }, { implementation: "proxy" }])),
      PROCESS,
    );
    assert.equal(nodePort.bridge.listNodes, true);
    assert.equal(nodePort.bridge.deployment, undefined);
    assert.equal(nodePort.bridge.readInstances, true);
  });

  it("lets the bridge read instance Services and their endpoints only where an app cluster uses the proxy (either hop)", () => {
    const plan = (networkConnector: unknown) =>
      planEnvironment(config([{ name: "a0", infrastructure: "local", networkConnector }]), PROCESS);
    assert.equal(
      plan({ implementation: "proxy", hop: "kernel", serviceType: "ClusterIP" }).bridge.readInstances,
      true,
    );
    assert.equal(plan({ implementation: "proxy", serviceType: "ClusterIP" }).bridge.readInstances, true);
    assert.equal(plan({ implementation: "wireguard" }).bridge.readInstances, true);
    assert.equal(plan({ implementation: "noop" }).bridge.readInstances, false);
  });

  it("lets the bridge write EndpointSlices in the proxies' namespace only where a proxy uses the kernel hop", () => {
    const plan = (networkConnector: unknown) =>
      planEnvironment(config([{ name: "a0", infrastructure: "local", networkConnector }]), PROCESS);
    assert.equal(
      plan({ implementation: "proxy", hop: "kernel", serviceType: "ClusterIP" }).bridge.writeSlices,
      true,
    );
    assert.equal(plan({ implementation: "proxy", serviceType: "ClusterIP" }).bridge.writeSlices, false);
    assert.equal(plan({ implementation: "wireguard" }).bridge.writeSlices, false);
  });

  it("binds each app cluster's APIs with the release's konnector unless the config names one", () => {
    const raw = config([{ name: "app", infrastructure: "local" }]);
    const plan = planEnvironment(raw, PROCESS);
    assert.match(plan.bind.appClusters[0]?.konnectorImage ?? "", /konnector/);
    assert.deepEqual(
      plan.bind.appClusters[0]?.apis.map((a) => a.resource),
      raw.exportedApis.map((a) => a.resource),
    );
    const own = planEnvironment(
      { ...raw, bind: { ...raw.bind, konnectorImage: "registry.example/konnector:1" } },
      PROCESS,
    );
    assert.equal(own.bind.appClusters[0]?.konnectorImage, "registry.example/konnector:1");
  });
});
