import { strict as assert } from "node:assert";
import {
  DRIFT_KINDS,
  DriftLedger,
  type Drift,
  type DriftKind,
  type WatchedObject,
} from "../../lib/bridge/drift";
import { groupFieldManager, proxyName } from "../../lib/bridge/grouping";
import { DriftWatch } from "./drift-watch";
import { FakeDriftInformer, FakeStacks, FakeWriter, reconciler } from "./test-helpers";
import { networkPath } from "../../test/helpers/network-path";

const GROUP = "team-a/proxy";

const object = (name: string, spec: unknown, instance = proxyName(GROUP)): WatchedObject => ({
  metadata: { name, namespace: "klutch-network", labels: { "app.kubernetes.io/instance": instance } },
  spec,
});

function watch(busy = false) {
  const informers = Object.fromEntries(DRIFT_KINDS.map((k) => [k, new FakeDriftInformer()])) as Record<
    DriftKind,
    FakeDriftInformer
  >;
  const drifts: [string, Drift][] = [];
  const logs: string[] = [];
  const w = new DriftWatch({
    informers,
    groups: () => [GROUP, "team-b/proxy"],
    busy: () => busy,
    onDrift: (key, d) => drifts.push([key, d]),
    log: (_level, msg) => logs.push(msg),
  });
  return { w, informers, drifts, logs };
}

describe("bridge: drift of a group's objects in the data plane", () => {
  it("a deleted object, and one whose spec someone changed, are drift of the group whose proxy name they carry", () => {
    const { informers, drifts } = watch();
    const deployment = object("np-team-a-proxy", { replicas: 2 });
    informers.Deployment.emit("add", deployment);
    informers.Deployment.emit("update", { ...deployment, status: { readyReplicas: 1 } });
    assert.deepEqual(drifts, [], "a status change is not the stack's to keep");
    informers.Deployment.emit("update", object("np-team-a-proxy", { replicas: 0 }));
    informers.Service.emit("delete", object("np-team-a-proxy", {}));
    // The EndpointSlice controller's slices of the proxy Service carry its labels; they are not the stack's.
    const controllers = object("np-team-a-proxy-x1", {});
    controllers.metadata!.labels!["endpointslice.kubernetes.io/managed-by"] =
      "endpointslice-controller.k8s.io";
    informers.EndpointSlice.emit("add", { ...controllers, endpoints: [] });
    informers.EndpointSlice.emit("update", { ...controllers, endpoints: [{ addresses: ["10.0.0.9"] }] });
    assert.deepEqual(drifts, [
      [GROUP, { kind: "Deployment", name: "np-team-a-proxy", change: "changed" }],
      [GROUP, { kind: "Service", name: "np-team-a-proxy", change: "deleted" }],
    ]);
  });

  it("ignores a group's objects while its own run may be changing them, and objects of no group it has", () => {
    const busy = watch(true);
    busy.informers.ConfigMap.emit("delete", object("np-team-a-proxy", {}));
    assert.deepEqual(busy.drifts, []);
    const idle = watch();
    idle.informers.ConfigMap.emit("delete", object("np-gone-proxy", {}, "np-gone-proxy"));
    assert.deepEqual(idle.drifts, []);
  });

  it("in the WireGuard gateway's flows, which no group makes, a group's keys someone else took or removed are that group's drift, told by its field manager", () => {
    const { informers, drifts } = watch();
    const a = groupFieldManager(GROUP);
    const b = groupFieldManager("team-b/proxy");
    // As the API server keeps ownership: the environment's manager made the ConfigMap, each
    // group's manager applied its own keys.
    const flows = (owners: [string, string[]][]): WatchedObject => ({
      metadata: {
        name: "wg-gateway-flows",
        namespace: "klutch-network",
        labels: { "app.kubernetes.io/instance": "wg" },
        managedFields: owners.map(([manager, keys]) => ({
          manager,
          operation: manager.startsWith("klutch-bridge-") ? "Apply" : "Update",
          fieldsType: "FieldsV1",
          fieldsV1: { "f:data": Object.fromEntries([[".", {}], ...keys.map((k) => [`f:${k}`, {}])]) },
        })),
      },
      data: {},
    });
    const both: [string, string[]][] = [
      [a, ["client-10.0.0.2.conf", "flows-10.0.0.2.nft"]],
      [b, ["client-10.0.0.3.conf", "flows-10.0.0.3.nft"]],
    ];
    informers.ConfigMap.emit("add", flows(both));
    informers.ConfigMap.emit("update", flows([...both, ["kubectl-client-side-apply", ["note"]]]));
    assert.deepEqual(drifts, [], "a key no group owns is not a group's");
    // `kubectl edit` of a's flows: the key moves to kubectl's manager.
    informers.ConfigMap.emit(
      "update",
      flows([
        [a, ["client-10.0.0.2.conf"]],
        [b, ["client-10.0.0.3.conf", "flows-10.0.0.3.nft"]],
        ["kubectl-edit", ["flows-10.0.0.2.nft"]],
      ]),
    );
    informers.ConfigMap.emit("delete", flows([[b, ["client-10.0.0.3.conf", "flows-10.0.0.3.nft"]]]));
    assert.deepEqual(drifts, [
      [
        GROUP,
        { kind: "ConfigMap", name: "wg-gateway-flows", change: "changed", keys: ["flows-10.0.0.2.nft"] },
      ],
      // Deleted whole: every key each group still owned, as the watch last saw them.
      [
        GROUP,
        { kind: "ConfigMap", name: "wg-gateway-flows", change: "deleted", keys: ["client-10.0.0.2.conf"] },
      ],
      [
        "team-b/proxy",
        {
          kind: "ConfigMap",
          name: "wg-gateway-flows",
          change: "deleted",
          keys: ["client-10.0.0.3.conf", "flows-10.0.0.3.nft"],
        },
      ],
    ]);
  });

  it("leaves off a kind the identity may not watch (403) and says so, and restarts another that failed", async () => {
    const { w, informers, logs } = watch();
    informers.EndpointSlice.startError = Object.assign(new Error("Forbidden"), { code: 403 });
    await w.start();
    assert.ok(logs.some((l) => /may not watch/.test(l)));
    informers.Deployment.emit("error", new Error("watch closed"));
    assert.ok(logs.some((l) => /drift watch failed; restarting/.test(l)));
    await w.stop();
  });

  it("the run after drift says Ready=False on each path at once, refreshes, says what it put back and is Ready again; a failed run keeps the drift for its retry", async () => {
    const ready = { hostForConsumer: "h", port: 1, conditions: [] };
    const paths = [networkPath("a", { status: ready }), networkPath("b", { status: { ...ready, port: 2 } })];
    const stacks = new FakeStacks();
    const ledger = new DriftLedger();
    const events: string[] = [];
    const writer = new FakeWriter();
    const written: string[] = [];
    const writeStatus = writer.writeStatus.bind(writer);
    writer.writeStatus = (p, status) => {
      const readyCondition = status.conditions?.find((c) => c.type === "Ready");
      written.push(`${p.metadata.name} ${readyCondition?.status} ${readyCondition?.reason} ${status.port}`);
      return writeStatus(p, status);
    };
    const { r } = reconciler(paths, stacks, writer, false, {
      drift: ledger,
      driftNamespace: "klutch-network",
      events: {
        record: (p, type, reason, message) => events.push(`${p.metadata.name} ${type} ${reason}: ${message}`),
      },
    });
    ledger.note(GROUP, { kind: "Deployment", name: "np-team-a-proxy", change: "deleted" });
    stacks.outputs = new Error("engine failed");
    await r.reconcile(GROUP).catch(() => undefined);
    stacks.outputs = {
      endpoints: { a: { hostForConsumer: "h", port: 1 }, b: { hostForConsumer: "h", port: 2 } },
      problems: {},
    };
    await r.reconcile(GROUP);
    await r.reconcile(GROUP);
    assert.deepEqual(stacks.refreshes, [true, true, false]);
    assert.deepEqual(written.slice(0, 2), ["a False DriftDetected 1", "b False DriftDetected 2"]);
    assert.deepEqual(written.slice(4, 8), [
      // (after the failed run's statuses) the retry's drift status, keeping each endpoint, then Ready from its run
      "a False DriftDetected 1",
      "b False DriftDetected 2",
      "a True ConnectivityEstablished 1",
      "b True ConnectivityEstablished 2",
    ]);
    assert.deepEqual(
      events.filter((e) => e.includes("DriftCorrected")),
      ["a", "b"].map(
        (n) =>
          `${n} Normal DriftCorrected: Deployment klutch-network/np-team-a-proxy was deleted outside the bridge; put back`,
      ),
    );
  });
});
