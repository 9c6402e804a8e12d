import { strict as assert } from "node:assert";
import { parse } from "yaml";
import {
  apiObjectName,
  boundApis,
  consumerNamespace,
  consumerRules,
  exportRequestSpec,
  konnectorNamespaceRules,
  konnectorRules,
  renderConsumerKubeconfig,
  serviceBindingSpec,
} from "../../lib/bind/app-cluster-plan";
import { hasWildcard } from "../../lib/bind/backend-plan";
import { environmentSchema } from "../../lib/config/schema";

const exported = environmentSchema.parse({
  environment: "t",
  controlPlane: { name: "cp", infrastructure: "local" },
}).exportedApis;
const EXPORT = ["get", "list", "watch", "create", "update", "patch", "delete"];

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

  it("consumer role: bound resources, read-only provider-owned claims, its bind objects; no wildcard", () => {
    const rules = consumerRules(boundApis({ apis: ["postgresqlinstances", "servicebindings"] }, exported));
    assert.deepEqual(rules, [
      { apiGroups: ["anynines.com"], resources: ["postgresqlinstances", "servicebindings"], verbs: EXPORT },
      { apiGroups: [""], resources: ["configmaps", "secrets"], verbs: ["get", "list", "watch"] },
      {
        apiGroups: ["klutch.anynines.com"],
        resources: ["apiserviceexportrequests", "apiservicenamespaces"],
        verbs: EXPORT,
      },
      {
        apiGroups: ["klutch.anynines.com"],
        resources: ["apiserviceexports", "clusterbindings"],
        verbs: ["get", "list", "watch"],
      },
      {
        apiGroups: ["klutch.anynines.com"],
        resources: ["apiserviceexports/status", "clusterbindings/status"],
        verbs: ["get", "update", "patch"],
      },
    ]);
    // Without a claiming API, no access to secrets at all.
    const noClaims = consumerRules(boundApis({ apis: ["postgresqlinstances"] }, exported));
    assert.ok(!noClaims.some((r) => r.resources.includes("secrets")));
  });

  it("consumer-owned claims get write access", () => {
    const api = {
      ...exported[0]!,
      permissionClaims: [
        { group: "", resource: "configmaps", version: "v1", selector: { owner: "Consumer" as const } },
      ],
    };
    const rules = consumerRules([api]);
    assert.deepEqual(
      rules.find((r) => r.resources.includes("configmaps")),
      { apiGroups: [""], resources: ["configmaps"], verbs: EXPORT },
    );
  });

  it("konnector: CRD changes limited to the bound CRDs, no wildcards anywhere", () => {
    const apis = boundApis({ apis: ["postgresqlinstances", "servicebindings"] }, exported);
    const rules = [...konnectorRules(apis), ...konnectorNamespaceRules()];
    for (const r of rules) assert.ok(!hasWildcard(r), JSON.stringify(r));
    const crdWrites = rules.find(
      (r) => r.resources.includes("customresourcedefinitions") && r.verbs.includes("update"),
    );
    assert.deepEqual(crdWrites?.resourceNames, [
      "postgresqlinstances.anynines.com",
      "servicebindings.anynines.com",
    ]);
    assert.deepEqual(rules.find((r) => r.resources.includes("secrets") && r.resourceNames)?.resourceNames, [
      "kubeconfig",
    ]);
  });

  it("records the request and the binding with the API's claims accepted", () => {
    const sb = exported.find((a) => a.resource === "servicebindings")!;
    assert.deepEqual(exportRequestSpec(sb), {
      resources: [
        {
          group: "anynines.com",
          resource: "servicebindings",
          versions: ["v1"],
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

  it("renders a token kubeconfig with the CA pinned and the consumer namespace as default", () => {
    const text = renderConsumerKubeconfig({
      name: "klutch-app-1",
      server: "https://cp:6443",
      caPem: "PEM",
      token: "tok",
      namespace: "cluster-app-1",
    });
    const k = parse(text);
    assert.equal(k["current-context"], "klutch-app-1");
    assert.equal(k.clusters[0].cluster.server, "https://cp:6443");
    assert.equal(
      Buffer.from(k.clusters[0].cluster["certificate-authority-data"], "base64").toString(),
      "PEM",
    );
    assert.deepEqual(k.users[0].user, { token: "tok" });
    assert.equal(k.contexts[0].context.namespace, "cluster-app-1");
  });
});
