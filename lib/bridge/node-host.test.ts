import { strict as assert } from "node:assert";
import { nodeHostMoved, nodePortHost, nodePortHosts, type NodeLike } from "./node-host";

const node = (
  name: string,
  addresses: Record<string, string>,
  extra: { ready?: boolean; unschedulable?: boolean; deleting?: boolean } = {},
): NodeLike => ({
  metadata: { name, ...(extra.deleting ? { deletionTimestamp: "2026-11-26T00:00:00Z" } : {}) },
  spec: { unschedulable: extra.unschedulable ?? false },
  status: {
    addresses: Object.entries(addresses).map(([type, address]) => ({ type, address })),
    conditions: [{ type: "Ready", status: extra.ready === false ? "False" : "True" }],
  },
});

describe("nodePortHost: the node address a NodePort proxy's consumers dial", () => {
  const a = node("a", { InternalIP: "10.0.1.5", ExternalIP: "203.0.113.5", Hostname: "a" });
  const b = node("b", { InternalIP: "10.0.1.6" });

  it("internal consumers get the InternalIP, others the ExternalIP, of the first Ready node by name", () => {
    assert.equal(nodePortHost([b, a], true), "10.0.1.5");
    assert.equal(nodePortHost([b, a], false), "203.0.113.5");
  });

  it("falls back to the other address type, then the DNS names; never the Hostname", () => {
    assert.equal(nodePortHost([b], false), "10.0.1.6");
    assert.equal(nodePortHost([node("c", { ExternalDNS: "c.example.org" })], true), "c.example.org");
    assert.equal(nodePortHost([node("d", { Hostname: "d" })], true), undefined);
  });

  it("skips nodes that are not Ready or are being deleted, and prefers schedulable ones", () => {
    assert.equal(
      nodePortHost([node("a", { InternalIP: "10.0.0.1" }, { ready: false }), b], true),
      "10.0.1.6",
    );
    assert.equal(
      nodePortHost([node("a", { InternalIP: "10.0.0.1" }, { deleting: true }), b], true),
      "10.0.1.6",
    );
    assert.equal(
      nodePortHost([node("a", { InternalIP: "10.0.0.1" }, { unschedulable: true }), b], true),
      "10.0.1.6",
    );
    assert.equal(
      nodePortHost([node("a", { InternalIP: "10.0.0.1" }, { unschedulable: true })], true),
      "10.0.0.1",
    );
  });

  it("has no host without a Ready node", () => {
    assert.equal(nodePortHost([], true), undefined);
    assert.equal(nodePortHost([{}], true), undefined);
  });
});

describe("nodeHostMoved: whether a NodePort group runs again", () => {
  const hosts = nodePortHosts([node("a", { InternalIP: "10.0.1.5", ExternalIP: "203.0.113.5" })]);

  it("compares the host the group was run with against the one for its consumers now", () => {
    assert.equal(nodeHostMoved("10.0.1.5", hosts, true), false);
    assert.equal(nodeHostMoved("10.0.1.9", hosts, true), true, "its node went");
    assert.equal(nodeHostMoved("10.0.1.5", hosts, false), true, "external consumers get the ExternalIP");
    assert.equal(nodeHostMoved(undefined, hosts, true), true, "run when no node was Ready: now one is");
  });

  it("no Ready node now is no move: the group keeps the host it has", () => {
    assert.equal(nodeHostMoved("10.0.1.5", nodePortHosts([]), true), false);
  });
});
