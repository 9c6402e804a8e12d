import { strict as assert } from "node:assert";
import { DriftLedger, describeDrift, kubernetesKind, objectDeletedByStep, type Drift } from "./drift";

const step = (op: string, type: string, name?: unknown) => ({
  resourcePreEvent: {
    metadata: { op, type, ...(name === undefined ? {} : { old: { outputs: { metadata: { name } } } }) },
  },
});

describe("bridge drift: the objects a run's own engine steps delete", () => {
  it("names the Kubernetes kind of a pulumi-kubernetes type, and nothing for other providers", () => {
    assert.equal(kubernetesKind("kubernetes:networking.k8s.io/v1:NetworkPolicy"), "NetworkPolicy");
    assert.equal(kubernetesKind("kubernetes:core/v1:ConfigMap"), "ConfigMap");
    assert.equal(kubernetesKind("kubernetes:core/v1:ConfigMapPatch"), "ConfigMap", "a patch's object");
    assert.equal(kubernetesKind("klutch:network:TcpProxy"), undefined);
    assert.equal(kubernetesKind("pulumi:providers:kubernetes"), undefined);
  });

  it("a removal and the old half of a replacement delete the object they name; other steps none", () => {
    assert.equal(
      objectDeletedByStep(step("delete", "kubernetes:core/v1:ConfigMap", "np-a-proxy-config-1")),
      "ConfigMap/np-a-proxy-config-1",
    );
    assert.equal(
      objectDeletedByStep(step("delete-replaced", "kubernetes:apps/v1:Deployment", "np-a-proxy")),
      "Deployment/np-a-proxy",
    );
    for (const op of ["create", "update", "same", "refresh", "replace", "create-replacement"])
      assert.equal(
        objectDeletedByStep(step(op, "kubernetes:apps/v1:Deployment", "np-a-proxy")),
        undefined,
        op,
      );
    assert.equal(objectDeletedByStep(step("delete", "klutch:network:TcpProxy", "np-a-proxy")), undefined);
    assert.equal(
      objectDeletedByStep(step("delete", "kubernetes:apps/v1:Deployment")),
      undefined,
      "no old outputs",
    );
    assert.equal(objectDeletedByStep({}), undefined);
  });
});

describe("bridge drift: how it reads, and what the ledger keeps", () => {
  it("names a shared object's keys, and keys noted one after another are put back together", () => {
    const ledger = new DriftLedger();
    const drift = (keys: string[]): Drift => ({
      kind: "ConfigMap",
      name: "wg-flows",
      change: "changed",
      keys,
    });
    ledger.note("a", drift(["flows-10.0.0.2.nft"]));
    ledger.note("a", drift(["client-10.0.0.2.conf"]));
    ledger.note("a", { kind: "Service", name: "np-a", change: "deleted" });
    const taken = ledger.take("a");
    assert.deepEqual(taken, [
      drift(["client-10.0.0.2.conf", "flows-10.0.0.2.nft"]),
      { kind: "Service", name: "np-a", change: "deleted" },
    ]);
    assert.equal(
      describeDrift(taken[0]!, "klutch-network"),
      "ConfigMap klutch-network/wg-flows (the group's keys client-10.0.0.2.conf, flows-10.0.0.2.nft) was changed outside the bridge",
    );
    assert.equal(
      describeDrift(taken[1]!, "klutch-network"),
      "Service klutch-network/np-a was deleted outside the bridge",
    );
    assert.deepEqual(ledger.take("a"), []);
  });
});
