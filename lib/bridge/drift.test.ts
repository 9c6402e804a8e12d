import { strict as assert } from "node:assert";
import { kubernetesKind, objectDeletedByStep } from "./drift";

const step = (op: string, type: string, name?: unknown) => ({
  resourcePreEvent: {
    metadata: { op, type, ...(name === undefined ? {} : { old: { outputs: { metadata: { name } } } }) },
  },
});

describe("bridge drift: the objects a run's own engine steps delete", () => {
  it("names the Kubernetes kind of a pulumi-kubernetes type, and nothing for other providers", () => {
    assert.equal(kubernetesKind("kubernetes:networking.k8s.io/v1:NetworkPolicy"), "NetworkPolicy");
    assert.equal(kubernetesKind("kubernetes:core/v1:ConfigMap"), "ConfigMap");
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
