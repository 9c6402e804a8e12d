import { strict as assert } from "node:assert";
import type { NodeLike } from "../../lib/bridge/node-host";
import { NodeHostTracker, type NodeHostTarget } from "./node-host-tracker";

const node = (name: string, internalIp: string, externalIp?: string): NodeLike => ({
  metadata: { name },
  status: {
    addresses: [
      { type: "InternalIP", address: internalIp },
      ...(externalIp ? [{ type: "ExternalIP", address: externalIp }] : []),
    ],
    conditions: [{ type: "Ready", status: "True" }],
  },
});

describe("NodeHostTracker: the node each NodePort group's proxy reports", () => {
  let targets: Record<string, NodeHostTarget>;
  let nodes: NodeLike[] | Error;
  let warnings: string[];
  const log = (_level: "warn", msg: string) => void warnings.push(msg);
  const tracker = (withNodes = true) =>
    new NodeHostTracker({
      targetOf: (key) => targets[key],
      ...(withNodes
        ? { nodes: () => (nodes instanceof Error ? Promise.reject(nodes) : Promise.resolve(nodes)) }
        : {}),
    });

  beforeEach(() => {
    targets = {
      "a/nodeport": { serviceType: "NodePort" },
      "b/public": { serviceType: "NodePort", exposure: { internal: false } },
      "c/given": { serviceType: "NodePort", nodeHost: "proxy.example.org" },
      "d/clusterip": { serviceType: "ClusterIP" },
    };
    nodes = [node("n1", "10.0.0.1", "203.0.113.1")];
    warnings = [];
  });

  it("picks a node only for a NodePort proxy without --node-host, and only with the nodes to list", () => {
    const t = tracker();
    assert.equal(t.picksNodeHostFor("a/nodeport"), true);
    assert.equal(t.picksNodeHostFor("c/given"), false);
    assert.equal(t.picksNodeHostFor("d/clusterip"), false);
    assert.equal(t.picksNodeHostFor("local/group"), false, "no kubernetes target");
    assert.equal(tracker(false).picksNodeHostFor("a/nodeport"), false);
  });

  it("realises a NodePort group with the first Ready node's address its consumers dial", async () => {
    const t = tracker();
    assert.deepEqual(await t.realise("a/nodeport", targets["a/nodeport"]!, log), {
      serviceType: "NodePort",
      nodeHost: "10.0.0.1",
    });
    assert.equal((await t.realise("b/public", targets["b/public"]!, log)).nodeHost, "203.0.113.1");
    assert.equal(await t.realise("c/given", targets["c/given"]!, log), targets["c/given"], "left as it is");
    assert.deepEqual(warnings, []);
  });

  it("says a group moved only once it ran, and only when its consumers' host is another now", async () => {
    const t = tracker();
    assert.equal(t.nodeHostMoved("a/nodeport", { internal: "10.0.0.2" }), false, "not run yet");
    await t.realise("a/nodeport", targets["a/nodeport"]!, log);
    assert.equal(t.nodeHostMoved("a/nodeport", { internal: "10.0.0.1", external: "203.0.113.9" }), false);
    assert.equal(t.nodeHostMoved("a/nodeport", { internal: "10.0.0.2" }), true);
    assert.equal(t.nodeHostMoved("a/nodeport", {}), false, "no Ready node is no better host");
    t.forget("a/nodeport");
    assert.equal(t.nodeHostMoved("a/nodeport", { internal: "10.0.0.2" }), false, "its stack is gone");
  });

  it("compares with the target as of now: a group that no longer picks a node never moved", async () => {
    const t = tracker();
    await t.realise("a/nodeport", targets["a/nodeport"]!, log);
    targets["a/nodeport"] = { serviceType: "LoadBalancer" };
    assert.equal(t.nodeHostMoved("a/nodeport", { internal: "10.0.0.2" }), false);
  });

  it("runs without a node when none is Ready or the nodes cannot be listed, says why, and moves once one is", async () => {
    const t = tracker();
    nodes = [];
    assert.deepEqual(await t.realise("a/nodeport", targets["a/nodeport"]!, log), { serviceType: "NodePort" });
    nodes = new Error("forbidden");
    assert.deepEqual(await t.realise("a/nodeport", targets["a/nodeport"]!, log), { serviceType: "NodePort" });
    assert.deepEqual(warnings, [
      "no Ready node with an address for the NodePort proxy's consumers",
      "cannot list the data plane's nodes for the NodePort proxy's consumers",
    ]);
    assert.equal(t.nodeHostMoved("a/nodeport", { internal: "10.0.0.1" }), true);
  });
});
