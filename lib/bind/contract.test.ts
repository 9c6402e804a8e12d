import { strict as assert } from "node:assert";
import { boundApis } from "./app-cluster-plan";
import { CONTRACT, binderNamespaceRules, binderRules, clusterWideGrants, contractAt } from "./contract";
import { bindCrds, bindingCrdFor } from "./crds";
import {
  allows,
  backendClusterRoleRules,
  concreteCalls,
  hasWildcard,
  konnectorClusterRoleRules,
  konnectorRoleRules,
  rowsGrantedBy,
  type PolicyRule,
} from "./rbac";
import { BIND_RELEASES, DEFAULT_BIND_RELEASE, releaseImages } from "./upstream/release";
import { environmentSchema } from "../../components/config/schema";

const exported = environmentSchema.parse({
  environment: "t",
  controlPlane: { name: "cp", infrastructure: "local" },
}).exportedApis;
const two = boundApis({ apis: ["postgresqlinstances", "servicebindings"] }, exported);

/** Every request a set of rows makes, with the role that must allow it. */
function requestsOf(grant: Parameters<typeof rowsGrantedBy>[0], apis = two) {
  return concreteCalls(rowsGrantedBy(grant), { apis, clusterNamespace: "cluster-app-1" }).flatMap((c) =>
    c.verbs.map((verb) => ({ id: c.row.id, group: c.group, resource: c.resource, verb, name: c.name })),
  );
}

describe("klutch-bind contract table", () => {
  it("has unique ids, a source and a release for every row", () => {
    const ids = CONTRACT.map((r) => r.id);
    assert.equal(new Set(ids).size, ids.length);
    for (const r of CONTRACT) {
      assert.match(r.source, /bind\//, `${r.id} names its upstream file`);
      assert.ok(r.verbs.length > 0 && r.why.length > 10, r.id);
      assert.deepEqual([...r.releases], [...BIND_RELEASES]);
    }
  });

  it("konnector ClusterRole: derived from the rows, no wildcard, CRD changes by name", () => {
    const rules = konnectorClusterRoleRules(two);
    for (const r of rules) assert.ok(!hasWildcard(r), JSON.stringify(r));
    const named = rules.filter((r) => r.resources.includes("customresourcedefinitions") && r.resourceNames);
    assert.deepEqual(
      named.map((r) => [r.verbs, r.resourceNames]),
      [
        [["get", "update"], ["apiservicebindings.klutch.anynines.com"]],
        [["update"], ["postgresqlinstances.anynines.com", "servicebindings.anynines.com"]],
      ],
    );
    // Every call of the konnector's cluster-wide rows is allowed, and nothing else of note.
    for (const req of requestsOf("konnector-cluster-role"))
      assert.ok(allows(rules, req), JSON.stringify(req));
    assert.ok(allows(rules, { group: "", resource: "configmaps", verb: "create" }), "a claim is written");
    assert.ok(!allows(rules, { group: "", resource: "pods", verb: "list" }));
    assert.ok(
      !allows(rules, {
        group: "apiextensions.k8s.io",
        resource: "customresourcedefinitions",
        verb: "delete",
      }),
    );
  });

  it("the konnector reads all Secrets and its binding CRD, writes status", () => {
    const rules = konnectorClusterRoleRules(boundApis({ apis: ["postgresqlinstances"] }, exported));
    assert.ok(
      allows(rules, { group: "", resource: "secrets", verb: "watch" }),
      "secrets informer, all namespaces",
    );
    assert.ok(
      allows(rules, {
        group: "apiextensions.k8s.io",
        resource: "customresourcedefinitions",
        verb: "update",
        name: "apiservicebindings.klutch.anynines.com",
      }),
      "CRD bootstrap",
    );
    assert.ok(
      allows(rules, { group: "anynines.com", resource: "postgresqlinstances/status", verb: "update" }),
    );
  });

  it("konnector Role in klutch-bind: its lease and, unless a claim already allows it, its kubeconfig Secret", () => {
    const noClaims = boundApis({ apis: ["postgresqlinstances"] }, exported);
    assert.deepEqual(konnectorRoleRules(noClaims), [
      { apiGroups: [""], resources: ["secrets"], verbs: ["update"], resourceNames: ["kubeconfig"] },
      { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create"] },
      {
        apiGroups: ["coordination.k8s.io"],
        resources: ["leases"],
        verbs: ["get", "update"],
        resourceNames: ["klutch-bind"],
      },
    ]);
    // servicebindings claims Secrets: the ClusterRole's claim rule already covers the kubeconfig update.
    assert.ok(!konnectorRoleRules(two).some((r) => r.resources.includes("secrets")));
  });

  it("the backend's klutch-binder roles cover every call the konnector makes on the control plane", () => {
    const inCns = requestsOf("klutch-binder");
    assert.ok(
      inCns.some((r) => r.resource === "namespaces" && r.name === "cluster-app-1"),
      "namespace get (finding 2)",
    );
    for (const req of inCns) assert.ok(allows(binderRules(), req), JSON.stringify(req));
    for (const req of requestsOf("klutch-binder-cns"))
      assert.ok(allows(binderNamespaceRules(two), req), JSON.stringify(req));
  });

  it("backend ClusterRole: its own calls and every rule it writes into roles, no wildcard/escalate/bind", () => {
    const rules = backendClusterRoleRules(exported);
    for (const r of rules) {
      assert.ok(!hasWildcard(r), JSON.stringify(r));
      for (const v of ["escalate", "bind", "impersonate"])
        assert.ok(!r.verbs.includes(v), `${v} in ${JSON.stringify(r)}`);
    }
    for (const req of requestsOf("backend-cluster-role", exported))
      assert.ok(allows(rules, req), JSON.stringify(req));
    const holds = (granted: PolicyRule[]) =>
      granted.every((g) =>
        g.resources.every((res) =>
          g.verbs.every((verb) => allows(rules, { group: g.apiGroups[0]!, resource: res, verb })),
        ),
      );
    assert.ok(holds(binderRules()), "holds klutch-binder");
    assert.ok(
      holds(binderNamespaceRules(exported)),
      "holds klutch-binder-<cns> for every exported API and claim",
    );
    assert.ok(
      !allows(rules, { group: "apps", resource: "deployments", verb: "list" }),
      "nothing the backend never calls",
    );
    assert.ok(
      !allows(rules, { group: "", resource: "events", verb: "create" }),
      "the backend emits no events",
    );
  });
});

describe("klutch-bind consumer scopes", () => {
  const clusterRb = (verb: string) => ({
    group: "rbac.authorization.k8s.io",
    resource: "clusterrolebindings",
    verb,
  });

  it("every row names its scopes; Cluster adds the cluster-wide grant and drops the per-namespace one", () => {
    for (const r of CONTRACT) assert.ok(r.scopes.length > 0, r.id);
    const grants = (scope: "Namespaced" | "Cluster") => new Set(contractAt(scope).map((r) => r.grantedBy));
    assert.ok(
      grants("Namespaced").has("klutch-binder-cns") && !grants("Namespaced").has("klutch-binder-cluster"),
    );
    assert.ok(grants("Cluster").has("klutch-binder-cluster") && !grants("Cluster").has("klutch-binder-cns"));
    // The konnector's provider-side informer is cluster-wide only at Cluster scope.
    const listsEverywhere = (scope: "Namespaced" | "Cluster") =>
      contractAt(scope).some(
        (r) => r.actor === "konnector" && r.cluster === "control-plane" && r.namespace === "all",
      );
    assert.equal(listsEverywhere("Namespaced"), false);
    assert.equal(listsEverywhere("Cluster"), true);
  });

  it("at Namespaced scope the backend cannot create ClusterRoleBinding klutch-binder-<cns> (upstream's flap), at Cluster it could", () => {
    const namespaced = backendClusterRoleRules(exported);
    assert.ok(allows(namespaced, clusterRb("delete")), "it still deletes one");
    assert.ok(!allows(namespaced, clusterRb("create")) && !allows(namespaced, clusterRb("update")));
    const b6 = CONTRACT.find((r) => r.id === "B6")!;
    assert.deepEqual(b6.refused, ["create", "update"]);
    const cluster = backendClusterRoleRules(exported, "Cluster");
    assert.ok(allows(cluster, clusterRb("create")) && allows(cluster, clusterRb("update")));
  });

  it("the klutch-binder-<cns> ClusterRole covers every call the Cluster scope's binding makes", () => {
    const calls = concreteCalls(rowsGrantedBy("klutch-binder-cluster", "Cluster"), {
      apis: two,
      clusterNamespace: "cluster-app-1",
    });
    assert.ok(calls.length > 0);
    for (const c of calls)
      for (const verb of c.verbs)
        assert.ok(
          allows(binderNamespaceRules(two), { group: c.group, resource: c.resource, verb }),
          c.row.id,
        );
  });

  it("what the identity holds outside its own namespaces: nothing at Namespaced, every bound and claimed resource at Cluster", () => {
    assert.deepEqual(clusterWideGrants("Namespaced", exported), []);
    const wide = clusterWideGrants("Cluster", exported);
    assert.ok(allows(wide, { group: "", resource: "secrets", verb: "list" }), "claimed secrets, everywhere");
    assert.ok(allows(wide, { group: "anynines.com", resource: "postgresqlinstances", verb: "delete" }));
  });
});

describe("klutch-bind releases", () => {
  it("pins v1.4.0, the newest release with published images, and derives the images from it", () => {
    assert.equal(DEFAULT_BIND_RELEASE, "v1.4.0");
    assert.deepEqual(releaseImages("v1.4.0"), {
      backend: "public.ecr.aws/w5n9a2g2/klutch/example-backend:v1.4.0",
      konnector: "public.ecr.aws/w5n9a2g2/klutch/konnector:v1.4.0",
    });
  });

  it("installs the release's CRDs: APIServiceBinding cluster-scoped, no AppClusterBinding (main only)", () => {
    for (const release of BIND_RELEASES) {
      const crds = bindCrds(release);
      assert.deepEqual(crds.map((c) => c.spec.names.kind).sort(), [
        "APIServiceBinding",
        "APIServiceExport",
        "APIServiceExportRequest",
        "APIServiceExportTemplate",
        "APIServiceNamespace",
        "ClusterBinding",
      ]);
      assert.equal(bindingCrdFor(release).spec.scope, "Cluster");
      assert.equal(
        bindingCrdFor(release).spec.versions[0]!.additionalPrinterColumns![1]!.jsonPath,
        ".metadata.annotations.bind\\.klutch.\\anynines\\.com/resources",
        "upstream's path, as the konnector writes it",
      );
    }
  });

  it("v1.4.0 differs from v1.5.0 exactly where controller-gen v0.10 did", () => {
    const specOf = (release: "v1.4.0" | "v1.5.0", kind: string) =>
      bindCrds(release).find((c) => c.spec.names.kind === kind)!.spec.versions[0]!.schema.openAPIV3Schema
        .properties!.spec!;
    assert.deepEqual(specOf("v1.4.0", "APIServiceExport").required, ["informerScope"]);
    assert.deepEqual(specOf("v1.5.0", "APIServiceExport").required, [
      "group",
      "informerScope",
      "names",
      "scope",
      "versions",
    ]);
    assert.equal(specOf("v1.4.0", "APIServiceExportTemplate").required, undefined);
    assert.deepEqual(specOf("v1.5.0", "APIServiceExportTemplate").required, ["APIServiceSelector"]);
    const claim = (release: "v1.4.0" | "v1.5.0") =>
      specOf(release, "APIServiceExportRequest").properties!.resources!.items!.properties!.permissionClaims!
        .items!.properties!;
    assert.equal(claim("v1.4.0").selector!.default, undefined);
    assert.deepEqual(claim("v1.5.0").selector!.default, {});
  });
});
