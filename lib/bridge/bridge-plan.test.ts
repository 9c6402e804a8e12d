import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { parse } from "yaml";
import { PUBLISHED_BRIDGE_IMAGE } from "./bridge-plan";
import { dataPlaneInstanceRules, dataPlaneNodeRules, dataPlaneRules } from "./rbac";
import { renderIssues } from "../config/messages";
import { validateEnvironment } from "../../components/config/validate";
import { klutchProgram } from "../../programs/stack/program";
import {
  fakeKubeconfig,
  fakeLocalStateDir,
  fakeNodeState,
  fakePublishedPackages,
  FAKE_REGISTRY,
  fakeValidationContext,
} from "../../test/helpers/kubeconfig";
import { mockPulumi, plainStrings, settle, SECRET_SIG, SECRET_MARKER } from "../../test/helpers/mocks";
import { LOCAL_CORE_FLAGS } from "../crossplane/crossplane-plan";

// Pulumi's wire signature for secret values (sdk/nodejs/runtime/rpc.ts specialSigKey/specialSecretSig).

const BRIDGE_IMAGE = "klutch.local/bridge:0.1.0-node24-pulumi3.259.0-0123456789ab";
const HAPROXY_IMAGE = "klutch.local/haproxy:2.6.12-1-ba9876543210";
const CROSSPLANE_IMAGE = "klutch.local/crossplane:2.4.0-0a1b2c3d4e5f";
const PASSPHRASE = "a-passphrase-for-the-bridge-only";

const nodeJson = (
  images: Record<string, string> = {
    bridge: BRIDGE_IMAGE,
    haproxy: HAPROXY_IMAGE,
    crossplane: CROSSPLANE_IMAGE,
  },
) =>
  JSON.stringify({
    slot: 3,
    nodeName: "control-plane-node",
    podCidr: "10.244.0.0/24",
    apiServerPort: 1,
    images,
    registry: FAKE_REGISTRY,
  });

/** Files the validator may read; anything else "does not exist". */
const context = (files: Record<string, string>) =>
  fakeValidationContext({ ...fakePublishedPackages("/project/.klutch/local"), ...files });

const kubeconfigs = {
  "/project/.klutch/local/control-plane/kubeconfig": fakeKubeconfig("control-plane"),
  "/project/.klutch/local/app-1/kubeconfig": fakeKubeconfig("app-1"),
  "/project/kube/prod.yaml": fakeKubeconfig("prod"),
};
const NODE_FILE = "/project/.klutch/local/control-plane/node/node.json";

function localWithNode(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    environment: "local",
    controlPlane: { name: "control-plane", infrastructure: "local", nodes: 1 },
    appClusters: [
      {
        name: "app-1",
        infrastructure: "local",
        networkConnector: { implementation: "proxy", serviceType: "NodePort" },
      },
    ],
    bridgePassphrase: PASSPHRASE,
    ...extra,
  };
}

function issuesOf(raw: Record<string, unknown>, files: Record<string, string>): string {
  const r = validateEnvironment(raw, context({ ...kubeconfigs, ...files }));
  return r.ok ? "" : renderIssues(r.issues, "test");
}

describe("the environment's bridge Deployment: config rules", () => {
  it("a local control plane with a node deploys it from the node's images; without a node, nothing", () => {
    const ok = validateEnvironment(localWithNode(), context({ ...kubeconfigs, [NODE_FILE]: nodeJson() }));
    assert.equal(ok.ok, true, ok.ok ? "" : renderIssues(ok.issues, "test"));
    // No node: no bridge, and so no passphrase is needed.
    const noNode = localWithNode({ controlPlane: { name: "control-plane", infrastructure: "local" } });
    delete noNode.bridgePassphrase;
    const r = validateEnvironment(noNode, context(kubeconfigs));
    assert.equal(r.ok, true, r.ok ? "" : renderIssues(r.issues, "test"));
  });

  const cases: {
    name: string;
    raw: Record<string, unknown>;
    files?: Record<string, string>;
    path: string;
    says: RegExp;
  }[] = [
    {
      name: "a node that was never started",
      raw: localWithNode(),
      files: {},
      path: "klutch:controlPlane.nodes",
      says: /is 1, but the node of "control-plane" has not been started \(no \/project\/\.klutch\/local\/control-plane\/node\/node\.json\).*start it with `npm run clusters -- up`/,
    },
    {
      name: "a node state without the bridge image",
      raw: localWithNode(),
      files: { [NODE_FILE]: nodeJson({ haproxy: HAPROXY_IMAGE }) },
      path: "klutch:controlPlane.nodes",
      says: /holds no bridge image \(.* lists haproxy\): restart it with `npm run clusters -- up` so that it imports klutch\.local\/bridge/,
    },
    {
      name: "an image the node does not hold",
      raw: localWithNode({ bridge: { image: "ghcr.io/klutch-pulumi/bridge:0.1.0" } }),
      files: { [NODE_FILE]: nodeJson() },
      path: "klutch:bridge.image",
      says: /"ghcr\.io\/klutch-pulumi\/bridge:0\.1\.0" is not an image the node of "control-plane" holds, and a local node pulls nothing .* remove bridge\.image to use klutch\.local\/bridge:0\.1\.0-/,
    },
    {
      name: "an unpinned image",
      raw: localWithNode({ bridge: { image: "klutch.local/bridge:latest" } }),
      files: { [NODE_FILE]: nodeJson() },
      path: "klutch:bridge.image",
      says: /must be pinned: give a tag other than latest/,
    },
    {
      name: "deploy on a local control plane without a node",
      raw: localWithNode({
        controlPlane: { name: "control-plane", infrastructure: "local" },
        bridge: { deploy: true },
      }),
      path: "klutch:bridge.deploy",
      says: /true needs a node on the local control plane \(klutch:controlPlane\.nodes is 0, so no pod can start\): set klutch:controlPlane\.nodes to 1, or remove bridge\.deploy and run the bridge as a process/,
    },
    {
      name: "a LoadBalancer proxy on a local node",
      raw: localWithNode({ appClusters: [{ name: "app-1", infrastructure: "local" }] }),
      files: { [NODE_FILE]: nodeJson() },
      path: "klutch:appClusters[0].networkConnector.serviceType",
      says: /"LoadBalancer" \(the default when unset\) never gets an address on the local cluster "control-plane".*set networkConnector\.serviceType to NodePort/,
    },
    {
      name: "a relative hostPath",
      raw: localWithNode({ bridge: { state: { kind: "hostPath", path: "state" } } }),
      files: { [NODE_FILE]: nodeJson() },
      path: "klutch:bridge.state.path",
      says: /"state" must be an absolute directory on the node/,
    },
    {
      name: "no passphrase",
      raw: { ...localWithNode(), bridgePassphrase: "" },
      files: { [NODE_FILE]: nodeJson() },
      path: "klutch:bridgePassphrase",
      says: /is required when the bridge is deployed .*`pulumi config set --secret klutch:bridgePassphrase/,
    },
    {
      name: "a short passphrase (its value never shown)",
      raw: { ...localWithNode(), bridgePassphrase: "hunter2" },
      files: { [NODE_FILE]: nodeJson() },
      path: "klutch:bridgePassphrase",
      says: /must be at least 16 characters \(the value given has 7\)/,
    },
    {
      name: "a cloud control plane without a shared state",
      raw: {
        environment: "prod",
        controlPlane: { name: "cp", infrastructure: "existing", kubeconfig: { path: "kube/prod.yaml" } },
        bridge: { deploy: true },
        bridgePassphrase: PASSPHRASE,
      },
      path: "klutch:bridge.state",
      says: /is required to deploy the bridge on infrastructure "existing": .* set bridge\.state to \{kind: backend, url: s3:\/\/bucket\/prefix\}/,
    },
    {
      name: "a hostPath state off a local cluster",
      raw: {
        environment: "prod",
        controlPlane: { name: "cp", infrastructure: "existing", kubeconfig: { path: "kube/prod.yaml" } },
        bridge: { deploy: true, state: { kind: "hostPath", path: "/srv/bridge" } },
        bridgePassphrase: PASSPHRASE,
      },
      path: "klutch:bridge.state.kind",
      says: /"hostPath" is only for a one-node local cluster: .* use \{kind: backend, url: s3:\/\/…\}/,
    },
    {
      name: "a file:// backend",
      raw: {
        environment: "prod",
        controlPlane: { name: "cp", infrastructure: "existing", kubeconfig: { path: "kube/prod.yaml" } },
        bridge: { deploy: true, state: { kind: "backend", url: "file:///srv/state" } },
        bridgePassphrase: PASSPHRASE,
      },
      path: "klutch:bridge.state.url",
      says: /"file:\/\/\/srv\/state" must be a backend every replica reaches/,
    },
  ];
  for (const c of cases) {
    it(`refuses ${c.name}, naming the setting, the value and the fix`, () => {
      const text = issuesOf(c.raw, c.files ?? {});
      const line = text.split("\n").find((l) => l.includes(`${c.path}:`)) ?? "";
      assert.match(line, c.says, text || "accepted");
      assert.ok(!text.includes("hunter2"), "a secret value in a message");
    });
  }
});

describe("the environment's bridge Deployment (mocks)", () => {
  it("on a local control plane with a node: BridgeDeployment from the node's images, BridgeIdentity's account, a data-plane identity, the passphrase as a secret; awaited (no skipAwait)", async () => {
    const stateDir = fakeLocalStateDir(["control-plane", "app-1"]);
    fakeNodeState(stateDir, "control-plane", {
      bridge: BRIDGE_IMAGE,
      haproxy: HAPROXY_IMAGE,
      crossplane: CROSSPLANE_IMAGE,
    });
    const run = mockPulumi(localWithNode({ localClusters: { stateDir } }));
    const outputs = klutchProgram();
    await settle();
    assert.ok("bridgeDeployment" in outputs);

    // Crossplane as the chart deploys it, from the node's image, awaited; in the node's network
    // namespace, so the API server on the host reaches its webhooks; the local core flags.
    const [chart] = run.ofType("kubernetes:helm.sh/v4:Chart");
    assert.ok(chart, "the Crossplane chart");
    assert.deepEqual(chart.inputs.values.image, {
      repository: "klutch.local/crossplane",
      tag: "2.4.0-0a1b2c3d4e5f",
      pullPolicy: "Never",
    });
    assert.equal(chart.inputs.values.webhooks, undefined, "the chart's webhooks, on");
    assert.equal(chart.inputs.values.hostNetwork, true);
    assert.equal(chart.inputs.values.dnsPolicy, "ClusterFirstWithHostNet");
    assert.equal(chart.inputs.values.deploymentStrategy, "Recreate", "no second pod on the same ports");
    assert.deepEqual(chart.inputs.values.args, ["--enable-ssa-claims", ...LOCAL_CORE_FLAGS]);
    assert.equal(chart.inputs.values.replicas, undefined, "the chart's own replica count");
    assert.notEqual(chart.inputs.skipAwait, true, "Pulumi waits for Crossplane's pods");
    assert.equal(run.ofType("kubernetes:yaml/v2:ConfigGroup").length, 0, "core init installs the CRDs");

    assert.equal(run.ofType("klutch:bridge:BridgeDeployment").length, 1);
    const [deployment] = run
      .ofType("kubernetes:apps/v1:Deployment")
      .filter((d) => d.inputs.metadata.name === "local-bridge");
    assert.ok(deployment, "the bridge's Deployment");
    assert.match(deployment.provider ?? "", /local-control-plane-provider/);
    assert.equal(deployment.inputs.metadata.namespace, "klutch-network");
    // Pulumi waits for its rollout: its pods run from images the node holds.
    assert.equal(deployment.inputs.metadata.annotations?.["pulumi.com/skipAwait"], undefined);
    const pod = deployment.inputs.spec.template.spec;
    assert.equal(pod.serviceAccountName, "klutch-bridge", "BridgeIdentity's ServiceAccount");
    const [container] = pod.containers;
    assert.equal(container.image, BRIDGE_IMAGE);
    assert.equal(container.imagePullPolicy, "Never");
    assert.equal(deployment.inputs.spec.replicas, 2);
    const at = container.args.indexOf("--proxy-image");
    assert.deepEqual(container.args.slice(at, at + 2), ["--proxy-image", HAPROXY_IMAGE]);
    assert.ok(!container.args.includes("--skip-await"), "the proxies are awaited too");
    const statePath = pod.volumes.find((v: { name: string }) => v.name === "state").hostPath.path;
    assert.equal(statePath, path.join(stateDir, "control-plane", "bridge-state"));

    // The passphrase and the data plane's kubeconfig reach the Secret only as secrets.
    const [secret] = run
      .ofType("kubernetes:core/v1:Secret")
      .filter((s) => s.inputs.metadata?.name === "local-bridge-secret");
    assert.ok(secret);
    // The whole stringData travels in Pulumi's secret envelope.
    assert.equal(secret.inputs.stringData[SECRET_SIG], SECRET_MARKER);
    const data = secret.inputs.stringData.value as Record<string, string>;
    assert.equal(data.passphrase, PASSPHRASE);
    // The data plane as the proxies' identity, reached at the kubernetes Service's address.
    const dataPlane = parse(data["data-plane-kubeconfig"] ?? "") as {
      clusters: { cluster: { server: string } }[];
      users: { user: { token: string } }[];
      contexts: { context: { namespace: string } }[];
    };
    assert.equal(dataPlane.clusters[0]?.cluster.server, "https://10.96.0.1:443");
    assert.equal(dataPlane.users[0]?.user.token, "token of local-bridge-data-plane-token");
    assert.equal(dataPlane.contexts[0]?.context.namespace, "klutch-network");
    assert.ok(!JSON.stringify(deployment.inputs).includes(PASSPHRASE));
    // Nowhere else either: no resource's plain inputs hold it.
    assert.deepEqual(
      run.resources
        .filter((r) => plainStrings(r.inputs).some((v) => v.includes(PASSPHRASE)))
        .map((r) => r.name),
      [],
    );

    // The data-plane identity: a Role of the proxies' namespace only, and its token Secret.
    assert.equal(run.ofType("klutch:bridge:BridgeDataPlane").length, 1);
    const [role] = run
      .ofType("kubernetes:rbac.authorization.k8s.io/v1:Role")
      .filter((r) => r.inputs.metadata.name === "klutch-bridge-proxies");
    assert.equal(role?.inputs.metadata.namespace, "klutch-network");
    assert.deepEqual(role?.inputs.rules, dataPlaneRules());
    // Its cluster-wide rights: listing nodes, since app-1's proxy is a NodePort Service, and
    // reading instance Services and their EndpointSlices, since the proxy's health reader judges them.
    const nodeReader = "klutch-bridge-proxies:klutch-network:nodes";
    const clusterRoles = run.ofType("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole");
    const [clusterRole] = clusterRoles.filter((r) => r.inputs.metadata.name === nodeReader);
    assert.deepEqual(clusterRole?.inputs.rules, dataPlaneNodeRules());
    const [instanceReader] = clusterRoles.filter(
      (r) => r.inputs.metadata.name === "klutch-bridge-proxies:klutch-network:instances",
    );
    assert.deepEqual(instanceReader?.inputs.rules, dataPlaneInstanceRules());
    const [clusterBinding] = run
      .ofType("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding")
      .filter((r) => r.inputs.metadata.name === nodeReader);
    assert.deepEqual(clusterBinding?.inputs.subjects, [
      { kind: "ServiceAccount", name: "klutch-bridge-proxies", namespace: "klutch-network" },
    ]);
    const [token] = run
      .ofType("kubernetes:core/v1:Secret")
      .filter((s) => s.inputs.metadata?.name === "klutch-bridge-proxies-token");
    assert.equal(token?.inputs.type, "kubernetes.io/service-account-token");
    // Upstream workloads stay applied only: their images cannot be pulled by a local node.
    const [backend] = run
      .ofType("kubernetes:apps/v1:Deployment")
      .filter((d) => d.inputs.metadata.name === "klutch-bind-backend");
    assert.equal(backend?.inputs.metadata.annotations?.["pulumi.com/skipAwait"], "true");
  });

  it("a cluster off this machine: the published image, the shared backend, pulled as usual", async () => {
    const stateDir = fakeLocalStateDir(["prod"]);
    const run = mockPulumi({
      environment: "prod",
      controlPlane: {
        name: "prod",
        infrastructure: "existing",
        kubeconfig: { path: path.join(stateDir, "prod", "kubeconfig") },
      },
      bridge: { deploy: true, state: { kind: "backend", url: "s3://klutch-bridge/prod" } },
      bridgePassphrase: PASSPHRASE,
    });
    klutchProgram();
    await settle();
    const [deployment] = run
      .ofType("kubernetes:apps/v1:Deployment")
      .filter((d) => d.inputs.metadata.name === "prod-bridge");
    assert.ok(deployment);
    const [container] = deployment.inputs.spec.template.spec.containers;
    assert.equal(container.image, PUBLISHED_BRIDGE_IMAGE);
    assert.equal(container.imagePullPolicy, "IfNotPresent");
    const at = container.args.indexOf("--backend");
    assert.deepEqual(container.args.slice(at, at + 2), ["--backend", "s3://klutch-bridge/prod"]);
    assert.ok(!container.args.includes("--proxy-image"), "TcpProxy's own image");
    // No NodePort proxy: the data-plane identity has no cluster-wide right at all.
    assert.deepEqual(
      run
        .ofType("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole")
        .filter((r) => String(r.inputs.metadata.name).startsWith("klutch-bridge-proxies")),
      [],
    );
    assert.equal(deployment.inputs.metadata.annotations?.["pulumi.com/skipAwait"], undefined);
  });

  it("registers nothing when a bridge setting is bad", () => {
    const stateDir = fakeLocalStateDir(["control-plane", "app-1"]);
    // nodes: 1, but the node was never started: no node.json.
    const run = mockPulumi(localWithNode({ localClusters: { stateDir } }));
    assert.throws(
      () => klutchProgram(),
      /klutch:controlPlane\.nodes: is 1, but the node of "control-plane" has not been started/,
    );
    assert.equal(run.resources.length, 0);
  });

  it("the published image's tag is this package's version", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8")) as {
      version: string;
    };
    assert.equal(PUBLISHED_BRIDGE_IMAGE.split(":").pop(), pkg.version);
  });
});
