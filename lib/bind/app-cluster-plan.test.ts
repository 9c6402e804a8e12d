import { strict as assert } from "node:assert";
import { parse } from "yaml";
import {
  apiObjectName,
  bindingIdentity,
  boundApis,
  clusterId,
  consumerNamespace,
  exportRequestSpec,
  renderConsumerKubeconfig,
  serviceBindingSpec,
} from "./app-cluster-plan";
import { environmentSchema } from "../../components/config/schema";

const exported = environmentSchema.parse({
  environment: "t",
  controlPlane: { name: "cp", infrastructure: "local" },
}).exportedApis;

describe("app cluster binding plan", () => {
  it("names the consumer namespace after the backend's prefix and the app cluster", () => {
    assert.equal(consumerNamespace("cluster", "app-1"), "cluster-app-1");
  });

  it("binds the APIs an app cluster names, or all exported ones", () => {
    assert.deepEqual(boundApis({}, exported).map(apiObjectName), [
      "postgresqlinstances.anynines.com",
      "servicebindings.anynines.com",
      "backups.anynines.com",
      "restores.anynines.com",
    ]);
    assert.deepEqual(
      boundApis({ apis: ["servicebindings"] }, exported).map((a) => a.resource),
      ["servicebindings"],
    );
  });

  it("records the request as /bind hands it back (no versions) and the binding with its claims accepted", () => {
    const sb = exported.find((a) => a.resource === "servicebindings")!;
    assert.deepEqual(exportRequestSpec(sb), {
      resources: [
        {
          group: "anynines.com",
          resource: "servicebindings",
          permissionClaims: [
            { group: "", resource: "secrets", version: "v1", selector: { owner: "Provider" } },
            { group: "", resource: "configmaps", version: "v1", selector: { owner: "Provider" } },
          ],
        },
      ],
    });
    const binding = serviceBindingSpec(sb);
    assert.deepEqual(binding.kubeconfigSecretRef, {
      name: "kubeconfig",
      namespace: "klutch-bind",
      key: "kubeconfig",
    });
    assert.deepEqual(
      binding.permissionClaims?.map((c) => [c.resource, c.state]),
      [
        ["secrets", "Accepted"],
        ["configmaps", "Accepted"],
      ],
    );
    assert.equal(serviceBindingSpec(exported[0]!).permissionClaims, undefined);
  });

  it("renders the kubeconfig as the backend does: all named default, CA pinned, the binding's namespace", () => {
    const text = renderConsumerKubeconfig({
      server: "https://cp:6443",
      caPem: "PEM",
      token: "tok",
      namespace: "cluster-app-1",
    });
    const k = parse(text);
    assert.equal(k["current-context"], "default");
    assert.deepEqual(k.contexts[0], {
      name: "default",
      context: { cluster: "default", user: "default", namespace: "cluster-app-1" },
    });
    assert.equal(k.clusters[0].cluster.server, "https://cp:6443");
    assert.equal(
      Buffer.from(k.clusters[0].cluster["certificate-authority-data"], "base64").toString(),
      "PEM",
    );
    assert.deepEqual(k.users[0].user, { token: "tok" });
    assert.equal(k.contexts[0].context.namespace, "cluster-app-1");
  });
});

describe("the binding's identity, as the backend files its namespace", () => {
  // Vectors from Go: sha256.Sum224 and big.Int.Text(62)[:6], the computation of
  // plugin/bind.go ClusterID at klutchio v1.4.0, run once with go1.26.8.
  it("clusterId is kubectl bind's: six base-62 digits of the SHA-224 of the namespace UID", () => {
    assert.equal(clusterId("6a1f0c2e-9a43-4b3e-8f0e-2d7c1b5e4a90"), "cfbQs1");
    assert.equal(clusterId("00000000-0000-0000-0000-000000000000"), "6EbPoz");
    assert.equal(clusterId("d3b07384-d9a0-4c9b-8f4e-1c2d3e4f5a6b"), "43jXKQ");
  });

  it("the identity is the OIDC subject and the cluster ID, joined by #", () => {
    assert.equal(bindingIdentity("CiQwOGE4Njg0Yi1kYjg4", "cfbQs1"), "CiQwOGE4Njg0Yi1kYjg4#cfbQs1");
  });
});
