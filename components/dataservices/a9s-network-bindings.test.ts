import { strict as assert } from "node:assert";
import * as k8s from "@pulumi/kubernetes";
import { mockPulumi, settle } from "../../test/helpers/mocks";
import { A9sNetworkBindings } from "./a9s-network-bindings";

describe("A9sNetworkBindings (mocked engine)", () => {
  it("registers the a9s network-aware binding compositions: the default's and one per offered implementation", async () => {
    const run = mockPulumi({});
    const bindings = new A9sNetworkBindings("env-a9s", {
      provider: new k8s.Provider("cp", {}),
      connectionImplementations: ["proxy", "awsVpcPeering"],
      labels: { "klutch.anynines.com/environment": "t" },
      dependsOn: [],
    });
    await settle();
    assert.deepEqual(bindings.compositions, [
      "a9s-servicebinding-network",
      "a9s-servicebinding-network-proxy",
      "a9s-servicebinding-network-awsvpcpeering",
    ]);
    const compositions = run.ofType("kubernetes:apiextensions.crossplane.io/v1:Composition");
    assert.deepEqual(
      compositions.map((c) => c.name),
      bindings.compositions.map((n) => `env-a9s-${n}`),
    );
    const peering = compositions.find((c) => c.name.endsWith("-awsvpcpeering"))!;
    assert.deepEqual(
      peering.inputs.spec.pipeline.map((p: { input: { kind: string } }) => p.input.kind),
      ["A9sServiceBinding", "NetworkConnections"],
    );
    assert.equal(peering.inputs.metadata.labels["klutch.anynines.com/environment"], "t");
  });
});
