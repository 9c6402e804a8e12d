import { strict as assert } from "node:assert";
import { environmentSchema } from "../../components/config/schema";
import { foreignNamespaceIssues, namespacesOnExistingClusters } from "./foreign-namespaces";

const config = (crossplane: Record<string, unknown> = {}) =>
  environmentSchema.parse({
    environment: "ops",
    controlPlane: { name: "ops-cp", infrastructure: "existing", kubeconfig: { path: "kube/ops-cp.yaml" } },
    appClusters: [
      { name: "shop", infrastructure: "existing", kubeconfig: { path: "kube/shop.yaml" } },
      { name: "dev", infrastructure: "local" },
    ],
    crossplane,
  });

describe("namespaces of the environment's on clusters it did not make (pure)", () => {
  it("lists, per cluster handed over by kubeconfig, each namespace the environment makes there; a local one is its own", () => {
    assert.deepEqual(namespacesOnExistingClusters(config()), [
      {
        cluster: "ops-cp",
        setting: "klutch:controlPlane.kubeconfig",
        namespaces: ["crossplane-system", "bind", "klutch-network", "cluster-shop", "cluster-dev"],
      },
      { cluster: "shop", setting: "klutch:appClusters[0].kubeconfig", namespaces: ["klutch-bind"] },
    ]);
    assert.ok(
      !namespacesOnExistingClusters(config({ useInstalled: true }))[0]!.namespaces.includes(
        "crossplane-system",
      ),
      "the operator's Crossplane's namespace is used, not made",
    );
  });

  it("refuses one that is there without this environment's label, naming cluster, namespace, owner and why; its own passes", () => {
    const [cp] = namespacesOnExistingClusters(config());
    const issues = foreignNamespaceIssues(
      [
        { name: "bind", labels: {} },
        { name: "klutch-network", labels: { "klutch.anynines.com/environment": "ops" } },
        { name: "cluster-shop", labels: { "klutch.anynines.com/environment": "staging" } },
      ],
      cp!,
      "ops",
    );
    assert.deepEqual(
      issues.map((i) => i.path),
      ["klutch:controlPlane.kubeconfig", "klutch:controlPlane.kubeconfig"],
    );
    assert.equal(
      issues[0]!.message,
      "the cluster ops-cp already has namespace bind, which environment ops did not make (it has no label klutch.anynines.com/environment=ops); " +
        "the environment makes bind itself, and would take it over and delete it, with everything in it, on destroy: " +
        "move what it holds elsewhere and delete it, or hand over a cluster without it",
    );
    assert.match(issues[1]!.message, /namespace cluster-shop, .*\(it belongs to environment staging\)/);
  });
});
