import { strict as assert } from "node:assert";
import { admittedPeers } from "./exposure";

describe("admittedPeers (the NetworkPolicy peers of an exposed Service's pods)", () => {
  const internal = { sourceRanges: ["10.20.0.0/16", "10.30.0.0/16"], internal: true, public: false };

  it("admits the data-service cluster's pods, every namespace, behind a ClusterIP Service", () => {
    // The source ranges play no part: a ClusterIP Service is reached from inside the cluster only.
    assert.deepEqual(admittedPeers(internal, "ClusterIP"), [{ namespaceSelector: {} }]);
  });

  it("admits each source range, and nothing else, behind a NodePort or LoadBalancer Service", () => {
    const peers = [{ ipBlock: { cidr: "10.20.0.0/16" } }, { ipBlock: { cidr: "10.30.0.0/16" } }];
    assert.deepEqual(admittedPeers(internal, "NodePort"), peers);
    assert.deepEqual(admittedPeers(internal, "LoadBalancer"), peers);
  });

  it("admits the world only as a public endpoint's exposure names it", () => {
    const world = { sourceRanges: ["0.0.0.0/0"], internal: false, public: true };
    assert.deepEqual(admittedPeers(world, "LoadBalancer"), [{ ipBlock: { cidr: "0.0.0.0/0" } }]);
  });
});
