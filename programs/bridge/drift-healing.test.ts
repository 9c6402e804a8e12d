import { strict as assert } from "node:assert";
import { DRIFT_KINDS, type DriftKind, type WatchedObject } from "../../lib/bridge/drift";
import { proxyName } from "../../lib/bridge/grouping";
import { DriftHealing } from "./drift-healing";
import { FakeDriftInformer } from "./test-helpers";

const GROUP = "team-a/proxy";
const object = (name: string): WatchedObject => ({
  metadata: { name, labels: { "app.kubernetes.io/instance": proxyName(GROUP) } },
  spec: {},
});
const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

function healing(held: string[]) {
  const informers = Object.fromEntries(DRIFT_KINDS.map((k) => [k, new FakeDriftInformer()])) as Record<
    DriftKind,
    FakeDriftInformer
  >;
  const queued: string[] = [];
  const h = new DriftHealing({
    kubeconfig: "",
    namespace: "klutch-network",
    informers,
    groups: () => [GROUP],
    enqueue: (key) => queued.push(key),
    stackObjects: () => Promise.resolve(new Set(held)),
    log: () => undefined,
    graceMs: 40,
    settleMs: 20,
  });
  return { h, informers, queued };
}

describe("bridge: drift healing around a group's own runs", () => {
  it("what one hand deletes together is queued once, after it settled, and every piece is in the ledger", async () => {
    const { h, informers, queued } = healing([]);
    informers.Deployment.emit("delete", object("np-team-a-proxy"));
    informers.Service.emit("delete", object("np-team-a-proxy"));
    assert.deepEqual(queued, [], "not before it settled");
    await wait(60);
    assert.deepEqual(queued, [GROUP]);
    assert.deepEqual(
      h.ledger.take(GROUP).map((d) => d.kind),
      ["Deployment", "Service"],
    );
    await h.stop();
  });

  it("a deletion during the group's run is the run's own when its stack no longer holds the object, drift when it still does", async () => {
    const { h, informers, queued } = healing(["Service/np-team-a-proxy"]);
    h.runStarted(GROUP);
    // The run replaced its ConfigMap (the stack holds the new one), and someone deleted the Service.
    informers.ConfigMap.emit("delete", object("np-team-a-proxy-config-old"));
    informers.Service.emit("delete", object("np-team-a-proxy"));
    assert.deepEqual(h.ledger.take(GROUP), [], "nothing is drift while the run may be making it");
    h.runEnded(GROUP);
    await wait(150);
    assert.deepEqual(queued, [GROUP]);
    assert.deepEqual(h.ledger.take(GROUP), [{ kind: "Service", name: "np-team-a-proxy", change: "deleted" }]);
    await h.stop();
  });

  it("a deletion the run put back already is still drift, named by the next run; one the run's own steps made (a replacement) is not", async () => {
    const { h, informers, queued } = healing(["NetworkPolicy/np-team-a-proxy", "Deployment/np-team-a-proxy"]);
    h.runStarted(GROUP);
    // Someone deletes the NetworkPolicy before the run's refresh reads it: the run makes it again.
    informers.NetworkPolicy.emit("delete", object("np-team-a-proxy"));
    informers.NetworkPolicy.emit("add", object("np-team-a-proxy"));
    // The run replaces its Deployment itself: pulumi-kubernetes deletes the named object first.
    h.runEvent(GROUP, {
      resourcePreEvent: {
        metadata: {
          op: "delete-replaced",
          type: "kubernetes:apps/v1:Deployment",
          old: { outputs: { metadata: { name: "np-team-a-proxy" } } },
        },
      },
    });
    informers.Deployment.emit("delete", object("np-team-a-proxy"));
    informers.Deployment.emit("add", object("np-team-a-proxy"));
    h.runEnded(GROUP);
    await wait(150);
    assert.deepEqual(queued, [GROUP]);
    assert.deepEqual(h.ledger.take(GROUP), [
      { kind: "NetworkPolicy", name: "np-team-a-proxy", change: "deleted" },
    ]);
    // The next run starts afresh: what the last one deleted does not hide a later hand's deletion.
    h.runStarted(GROUP);
    informers.Deployment.emit("delete", object("np-team-a-proxy"));
    h.runEnded(GROUP);
    await wait(150);
    assert.deepEqual(h.ledger.take(GROUP), [
      { kind: "Deployment", name: "np-team-a-proxy", change: "deleted" },
    ]);
    await h.stop();
  });
});
