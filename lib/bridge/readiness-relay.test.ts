import { strict as assert } from "node:assert";
import { CONNECTION_STATUS_ANNOTATION, ownerNudge, relayStep } from "./readiness-relay";
import { isReady } from "../kube/owner-conditions";

const owned = (owner?: { apiVersion: string; kind: string; controller?: boolean }) => ({
  metadata: { ownerReferences: owner ? [{ name: "orders-app-x7k2p", controller: true, ...owner }] : [] },
});

describe("readiness relay to a connection's owner (pure)", () => {
  it("annotates a network-aware ServiceBinding's composite that owns the connection", () => {
    assert.deepEqual(
      ownerNudge(owned({ apiVersion: "anynines.com/v1", kind: "XServiceBinding" }), "2026-11-27T02:45:16Z"),
      {
        group: "anynines.com",
        version: "v1",
        plural: "xservicebindings",
        name: "orders-app-x7k2p",
        annotations: { [CONNECTION_STATUS_ANNOTATION]: "2026-11-27T02:45:16Z" },
      },
    );
  });

  it("leaves alone a connection with no owner, an owner it may not annotate, and a non-controller owner", () => {
    assert.equal(ownerNudge(owned(), "t"), undefined);
    assert.equal(ownerNudge(owned({ apiVersion: "example.org/v1", kind: "XApp" }), "t"), undefined);
    assert.equal(ownerNudge(owned({ apiVersion: "v1", kind: "XServiceBinding" }), "t"), undefined);
    assert.equal(
      ownerNudge(owned({ apiVersion: "anynines.com/v1", kind: "XServiceBinding", controller: false }), "t"),
      undefined,
    );
  });

  it("Ready means a Ready condition that is True", () => {
    assert.equal(isReady({}), false);
    assert.equal(isReady({ status: { conditions: [{ type: "Ready", status: "False" }] } }), false);
    assert.equal(isReady({ status: { conditions: [{ type: "Synced", status: "True" }] } }), false);
    assert.equal(isReady({ status: { conditions: [{ type: "Ready", status: "True" }] } }), true);
  });

  it("relays a readiness once the composite shows it, both ways; waits until then; nothing without an owner", () => {
    const binding = owned({ apiVersion: "anynines.com/v1", kind: "XServiceBinding" });
    const withReady = (status: string) => ({
      ...binding,
      status: { conditions: [{ type: "Ready", status }] },
    });
    const annotated = { [CONNECTION_STATUS_ANNOTATION]: "T" };
    assert.deepEqual(
      (relayStep(withReady("True"), true, "T") as { annotations: unknown }).annotations,
      annotated,
    );
    assert.equal(relayStep(withReady("False"), true, "T"), "wait");
    // A path gone unusable: the owner is told once the composite is no longer Ready.
    assert.deepEqual(
      (relayStep(withReady("False"), false, "T") as { annotations: unknown }).annotations,
      annotated,
    );
    assert.equal(relayStep(withReady("True"), false, "T"), "wait");
    assert.equal(relayStep({ ...owned(), status: { conditions: [] } }, true, "T"), "none");
  });
});
