import { strict as assert } from "node:assert";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { parse } from "yaml";
import { AppClusterBinding } from "./app-cluster-binding";
import { boundApis, clusterId } from "../../lib/bind/app-cluster-plan";
import { environmentSchema } from "../config/schema";
import { klutchProgram } from "../../programs/stack/program";
import { fakeLocalStateDir } from "../../test/helpers/kubeconfig";
import {
  isSecretEnvelope,
  mockPulumi,
  plainStrings,
  settle,
  valueOf,
  withServerSide,
  type Registered,
} from "../../test/helpers/mocks";

const exported = environmentSchema.parse({
  environment: "t",
  controlPlane: { name: "cp", infrastructure: "local" },
}).exportedApis;

function counts(resources: Registered[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of resources) out[r.type] = (out[r.type] ?? 0) + 1;
  return out;
}

const TOKEN = "eyJhbGciOiJSUzI1NiJ9.consumer-token";

/** The shared mocks, with the token controller's work done: the token Secret gets its data. */
function mocked() {
  const run = mockPulumi({});
  withServerSide((a, r) => {
    // The API server gives each namespace a UID (the cluster ID of kubectl bind hashes it).
    if (a.type === "kubernetes:core/v1:Namespace")
      return { ...r, state: { ...a.inputs, metadata: { ...a.inputs.metadata, uid: `uid-of-${a.name}` } } };
    if (a.type === "kubernetes:core/v1:Secret" && a.inputs.type === "kubernetes.io/service-account-token")
      return { ...r, state: { ...a.inputs, data: { token: Buffer.from(TOKEN).toString("base64") } } };
    return undefined;
  });
  return run;
}

function binding(apis = exported, identity?: { subject: string }) {
  return new AppClusterBinding("app-1", {
    ...(identity ? { identity } : {}),
    appCluster: "app-1",
    controlPlaneProvider: new k8s.Provider("cp", { kubeconfig: "fake" }),
    controlPlaneKubeconfig: pulumi.secret("admin-kubeconfig"),
    appClusterProvider: new k8s.Provider("app", { kubeconfig: "fake" }),
    namespacePrefix: "cluster",
    prettyName: "Klutch",
    apis,
    controlPlane: { address: "https://cp.example.com:6443", caPem: "PEM" },
    release: "v1.4.0",
    konnectorImage: "example/konnector:v1",
    awaitExports: true,
  });
}

describe("AppClusterBinding (mocks)", () => {
  it("files the binding's namespace under the binder's identity, as the backend's /bind looks it up", async () => {
    const run = mocked();
    binding(exported, { subject: "CiQwOGE4Njg0Yi1kYjg4" });
    await settle();
    const consumerNs = run.resources.find(
      (r) => r.type === "kubernetes:core/v1:Namespace" && r.provider?.includes("::cp::"),
    )!;
    const annotations = consumerNs.inputs.metadata.annotations as Record<string, string>;
    assert.deepEqual(annotations, {
      "example-backend.klutch.anynines.com/identity": `CiQwOGE4Njg0Yi1kYjg4#${clusterId("uid-of-app-1-konnector-namespace")}`,
    });
  });

  it("without a subject the namespace carries no identity", async () => {
    const run = mocked();
    binding();
    await settle();
    const consumerNs = run.resources.find(
      (r) => r.type === "kubernetes:core/v1:Namespace" && r.provider?.includes("::cp::"),
    )!;
    assert.equal(consumerNs.inputs.metadata.annotations, undefined);
  });

  it("creates exactly the control plane and app cluster objects of one binding", async () => {
    const run = mocked();
    binding();
    await settle();
    const onCp = run.resources.filter((r) => r.provider?.includes("::cp::"));
    const onApp = run.resources.filter((r) => r.provider?.includes("::app::"));
    assert.deepEqual(counts(onCp), {
      "kubernetes:core/v1:Namespace": 1,
      "kubernetes:core/v1:ServiceAccount": 1,
      "kubernetes:core/v1:Secret": 2,
      "kubernetes:klutch.anynines.com/v1alpha1:ClusterBinding": 1,
    });
    // One-shot export requests, through the control plane's admin kubeconfig, kept secret.
    const requests = run.resources.filter((r) => r.type.endsWith("ExportRequest"));
    assert.deepEqual(requests.map((r) => r.inputs.name).sort(), [
      "backups.anynines.com",
      "postgresqlinstances.anynines.com",
      "restores.anynines.com",
      "servicebindings.anynines.com",
    ]);
    for (const r of requests) assert.equal(r.inputs.awaitExport, true);
    assert.deepEqual(counts(onApp), {
      "kubernetes:core/v1:Namespace": 1,
      "kubernetes:core/v1:ServiceAccount": 1,
      "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole": 1,
      "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding": 1,
      "kubernetes:rbac.authorization.k8s.io/v1:Role": 1,
      "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding": 1,
      "kubernetes:core/v1:Secret": 1,
      "kubernetes:apps/v1:Deployment": 1,
      "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition": 1,
      "kubernetes:klutch.anynines.com/v1alpha1:APIServiceBinding": 4,
    });
    // No RBAC on the control plane: the backend's controllers bind klutch-binder (upstream's way).
    assert.equal(onCp.filter((r) => r.type.includes("rbac")).length, 0);
    const sa = onCp.find((r) => r.type === "kubernetes:core/v1:ServiceAccount")!;
    assert.equal(sa.inputs.metadata.name, "klutch-binder");
    // The APIServiceBinding CRD is created once and then left to the konnector, which rewrites it.
    const crd = onApp.find((r) => r.type.endsWith("CustomResourceDefinition"))!;
    assert.equal(crd.inputs.spec.scope, "Cluster");
    assert.deepEqual(crd.inputs.metadata.labels ?? {}, {});
    const sb = onApp.find((r) => r.type.endsWith("APIServiceBinding"))!;
    assert.equal(sb.inputs.metadata.namespace, undefined, "cluster-scoped at v1.4.0");
    const ns = onCp.find((r) => r.type === "kubernetes:core/v1:Namespace")!;
    assert.equal(ns.inputs.metadata.name, "cluster-app-1");
    const cb = onCp.find((r) => r.type.endsWith("ClusterBinding"))!;
    assert.equal(cb.inputs.metadata.name, "cluster");
    assert.deepEqual(cb.inputs.spec.kubeconfigSecretRef, { name: "kubeconfig", key: "kubeconfig" });
  });

  it("binds only the APIs given, with RBAC rules that name everything (no wildcards)", async () => {
    const run = mocked();
    binding(boundApis({ apis: ["postgresqlinstances"] }, exported));
    await settle();
    assert.equal(run.resources.filter((r) => r.type.endsWith("ExportRequest")).length, 1);
    assert.deepEqual(
      run
        .ofType("kubernetes:klutch.anynines.com/v1alpha1:APIServiceBinding")
        .map((b) => b.inputs.metadata.name),
      ["postgresqlinstances.anynines.com"],
    );
    const roles = [
      ...run.ofType("kubernetes:rbac.authorization.k8s.io/v1:Role"),
      ...run.ofType("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"),
    ];
    assert.equal(roles.length, 2);
    for (const role of roles) {
      for (const rule of role.inputs.rules as {
        apiGroups: string[];
        resources: string[];
        verbs: string[];
      }[]) {
        assert.ok(
          ![...rule.apiGroups, ...rule.resources, ...rule.verbs].includes("*"),
          `${role.name}: wildcard`,
        );
      }
    }
    // No claiming API bound: the konnector may read Secrets (its informer) but write none but its own.
    const cluster = run.ofType("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole")[0]!;
    const secretRules = (cluster.inputs.rules as { resources: string[]; verbs: string[] }[]).filter((r) =>
      r.resources.includes("secrets"),
    );
    assert.deepEqual(
      secretRules.map((r) => r.verbs),
      [["list", "watch"]],
    );
  });

  it("keeps the kubeconfig secret: the output, both Secrets, and nowhere in plain inputs", async () => {
    const run = mocked();
    const b = binding();
    await settle();
    assert.equal(await pulumi.isSecret(b.kubeconfig), true);
    const kubeconfig = parse(await valueOf(b.kubeconfig));
    assert.equal(kubeconfig.users[0].user.token, TOKEN);
    assert.equal(kubeconfig.clusters[0].cluster.server, "https://cp.example.com:6443");
    assert.equal(kubeconfig.contexts[0].context.namespace, "cluster-app-1");
    for (const name of ["app-1-consumer-kubeconfig", "app-1-konnector-kubeconfig"]) {
      const s = run.ofType("kubernetes:core/v1:Secret").find((r) => r.name === name)!;
      assert.ok(isSecretEnvelope(s.inputs.stringData), `${name} stringData is a secret`);
    }
    const plain = run.resources.flatMap((r) => plainStrings(r.inputs));
    assert.ok(!plain.some((s) => s.includes(TOKEN)), "the token appears in plain inputs");
  });

  it("invalid bindings fail before any resource is registered, naming the field", () => {
    const stateDir = fakeLocalStateDir(["control-plane", "app-1"]);
    const run = mockPulumi({
      environment: "local",
      controlPlane: { name: "control-plane", infrastructure: "local" },
      appClusters: [
        { name: "app-1", infrastructure: "local", apis: ["mysqlinstances"] },
        { name: "app-1", infrastructure: "local" },
        { name: "app-9", infrastructure: "existing", kubeconfig: { path: "/nowhere/kubeconfig" } },
      ],
      localClusters: { stateDir },
    });
    assert.throws(
      () => klutchProgram(),
      (e: Error) =>
        /klutch:appClusters\[0\]\.apis\[0\]/.test(e.message) &&
        /klutch:appClusters\[1\]\.name/.test(e.message) &&
        /klutch:appClusters\[2\]\.kubeconfig/.test(e.message),
    );
    assert.equal(run.resources.length, 0);
  });
});
