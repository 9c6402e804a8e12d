import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as nodePath from "node:path";
import * as k8s from "@pulumi/kubernetes";
import { BridgeIdentity } from "../../components/bridge/bridge-identity";
import { BridgeMetrics } from "../../lib/bridge/metrics";
import {
  BRIDGE_FINALIZER,
  assignSlot,
  backoffDelay,
  bridgeRules,
  failedStatus,
  groupKey,
  isManaged,
  needsReconcile,
  realisationOf,
  unsupportedImplementation,
  staleLocks,
  planGroup,
  readyStatus,
  sameStatus,
  slotRange,
  stackName,
  type NetworkPathObject,
} from "../../lib/bridge/model";
import { localHaproxyProvider } from "../../providers/local-haproxy";
import { mockPulumi, settle } from "../helpers/mocks";

function path(
  name: string,
  extra: Partial<NetworkPathObject["metadata"]> = {},
  ns = "team-a",
): NetworkPathObject {
  return {
    metadata: { name, generation: 3, ...extra },
    spec: {
      implementation: "proxy",
      connection: `xr-${name}`,
      consumerNamespace: ns,
      instanceHost: "10.0.0.5",
      port: 5432,
    },
  };
}

describe("Crossplane bridge: pure decisions", () => {
  it("groups paths per consumer namespace and implementation, with stable stack names", () => {
    assert.equal(groupKey(path("a")), "team-a/proxy");
    assert.equal(groupKey(path("a", {}, "team-b")), "team-b/proxy");
    assert.equal(groupKey(path("a", {}, "")), "_unclaimed/proxy");
    assert.equal(groupKey(path("a", {}, "")), "_unclaimed/proxy");
    assert.equal(stackName("team-a/proxy"), "np-team-a-proxy");
    assert.equal(stackName("Team_A/WireGuard"), "np-team-a-wireguard");
    assert.ok(stackName(`${"x".repeat(200)}/proxy`).length <= 100);
  });

  it("plans live paths sorted, and releases only deleting paths that still carry the finalizer", () => {
    const now = "2026-11-22T00:00:00Z";
    const plan = planGroup([
      path("c"),
      path("a"),
      path("gone", { deletionTimestamp: now, finalizers: [BRIDGE_FINALIZER] }),
      path("other", { deletionTimestamp: now, finalizers: ["someone-else"] }),
    ]);
    assert.deepEqual(
      plan.live.map((p) => p.metadata.name),
      ["a", "c"],
    );
    assert.deepEqual(
      plan.releasing.map((p) => p.metadata.name),
      ["gone"],
    );
  });

  it("reports Ready with the seed's reason and message, Synced, and the observed generation", () => {
    const s = readyStatus(path("a"), { hostForConsumer: "127.0.0.1", port: 43001 }, "T1");
    assert.equal(s.hostForConsumer, "127.0.0.1");
    assert.equal(s.port, 43001);
    assert.equal(s.observedGeneration, 3);
    assert.deepEqual(
      s.conditions?.map((c) => [c.type, c.status, c.reason, c.message]),
      [
        ["Ready", "True", "ConnectivityEstablished", "TCP connection available at 127.0.0.1:43001"],
        ["Synced", "True", "ReconcileSuccess", "The network path matches the spec"],
      ],
    );
  });

  it("keeps transition times while a condition's status holds, and moves them when it flips", () => {
    const p = path("a");
    p.status = readyStatus(p, { hostForConsumer: "h", port: 1 }, "T1");
    const again = readyStatus(p, { hostForConsumer: "h", port: 1 }, "T2");
    assert.ok(again.conditions?.every((c) => c.lastTransitionTime === "T1"));
    assert.ok(sameStatus(p.status, again), "nothing to write");
    const failed = failedStatus(p, "engine exploded", "T3");
    // The old path still works: Ready stays True with its endpoint; Synced reports the error.
    assert.equal(failed.hostForConsumer, "h");
    assert.deepEqual(
      failed.conditions?.map((c) => [c.type, c.status, c.lastTransitionTime]),
      [
        ["Ready", "True", "T1"],
        ["Synced", "False", "T3"],
      ],
    );
    assert.ok(!sameStatus(p.status, failed));
  });

  it("a path that never worked fails as Ready=False with the error as the message", () => {
    const failed = failedStatus(path("new"), "x".repeat(2000), "T");
    const ready = failed.conditions?.find((c) => c.type === "Ready");
    assert.equal(ready?.status, "False");
    assert.equal(ready?.reason, "ReconcileError");
    assert.equal(ready?.message.length, 1000);
    assert.equal(failed.hostForConsumer, undefined);
  });

  it("realises proxy paths with a proxy, routed implementations by probing the instance, and leaves NOOP alone", () => {
    assert.equal(realisationOf("proxy"), "proxy");
    for (const routed of ["wireguard", "awsVpcPeering", "openstack"])
      assert.equal(realisationOf(routed), "routed");
    assert.equal(realisationOf("noop"), "ignored");
    assert.equal(realisationOf("istio"), undefined);
    assert.equal(realisationOf("toString"), undefined, "no prototype keys");
    assert.equal(isManaged(path("a")), true);
    assert.equal(isManaged({ spec: { ...path("a").spec, implementation: "noop" } }), false);
    assert.equal(
      unsupportedImplementation("istio"),
      'implementation "istio" is not realised by this bridge; it realises proxy, wireguard, awsVpcPeering, openstack (noop needs no bridge)',
    );
  });

  it("a failed probe makes the path Ready=False with the probe's reason, still Synced, endpoint reported", () => {
    const now = "2026-11-22T10:00:00Z";
    const status = readyStatus(
      path("a"),
      {
        hostForConsumer: "10.0.0.5",
        port: 5432,
        probe: { ready: false, reason: "ConnectionRefused", message: "10.0.0.5:5432 refused the connection" },
      },
      now,
    );
    assert.equal(status.hostForConsumer, "10.0.0.5");
    assert.deepEqual(
      status.conditions?.map((c) => [c.type, c.status, c.reason, c.message]),
      [
        ["Ready", "False", "ConnectionRefused", "10.0.0.5:5432 refused the connection"],
        ["Synced", "True", "ReconcileSuccess", "The network path matches the spec"],
      ],
    );
    const ok = readyStatus(
      path("a"),
      {
        hostForConsumer: "10.0.0.5",
        port: 5432,
        probe: { ready: true, reason: "ConnectivityEstablished", message: "" },
      },
      now,
    );
    assert.equal(ok.conditions?.[0]?.status, "True");
  });

  it("backs off exponentially with jitter, capped", () => {
    assert.equal(
      backoffDelay(1, 1000, 60_000, () => 0),
      500,
    );
    assert.equal(
      backoffDelay(1, 1000, 60_000, () => 1),
      1000,
    );
    assert.equal(
      backoffDelay(4, 1000, 60_000, () => 1),
      8000,
    );
    assert.equal(
      backoffDelay(30, 1000, 60_000, () => 1),
      60_000,
    );
  });

  it("gives each group a stable slot of the port range, the lowest free one, and refuses when full", () => {
    assert.equal(assignSlot({}, "a", 4), 0);
    assert.equal(assignSlot({ a: 0, b: 2 }, "c", 4), 1);
    assert.equal(assignSlot({ a: 0, b: 2 }, "b", 4), 2);
    assert.throws(() => assignSlot({ a: 0, b: 1 }, "c", 2), /no free port slot for c/);
    assert.deepEqual(slotRange({ from: 42000, to: 42999 }, 2, 50), { from: 42100, to: 42149 });
    assert.throws(() => slotRange({ from: 42000, to: 42099 }, 2, 50), /outside the port range/);
  });

  it("renders Prometheus metrics with reconcile counts, engine runs and a duration histogram", () => {
    const m = new BridgeMetrics();
    m.recordReconcile("success", 3.2);
    m.recordReconcile("error", 0.4);
    m.recordEngineRun();
    const text = m.render();
    assert.match(text, /klutch_bridge_reconciles_total\{result="success"\} 1/);
    assert.match(text, /klutch_bridge_reconciles_total\{result="error"\} 1/);
    assert.match(text, /klutch_bridge_engine_runs_total 1/);
    assert.match(text, /klutch_bridge_reconcile_duration_seconds_bucket\{le="0.5"\} 1/);
    assert.match(text, /klutch_bridge_reconcile_duration_seconds_bucket\{le="5"\} 2/);
    assert.match(text, /klutch_bridge_reconcile_duration_seconds_count 2/);
  });

  it("the bridge's RBAC names its resources and verbs: no wildcard, nothing but NetworkPaths and events", () => {
    for (const r of bridgeRules()) {
      assert.ok(![...r.apiGroups, ...r.resources, ...r.verbs].includes("*"));
    }
    assert.deepEqual(
      bridgeRules().flatMap((r) => r.resources),
      ["networkpaths", "networkpaths/status", "events"],
    );
  });

  it("BridgeIdentity registers exactly a ServiceAccount, a ClusterRole and its binding", async () => {
    const run = mockPulumi({});
    new BridgeIdentity("bridge", {
      provider: new k8s.Provider("cp", { kubeconfig: "fake" }),
      namespace: "klutch-network",
    });
    await settle();
    assert.deepEqual(run.resources.map((r) => r.type).sort(), [
      "klutch:bridge:BridgeIdentity",
      "kubernetes:core/v1:ServiceAccount",
      "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole",
      "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding",
      "pulumi:providers:kubernetes",
    ]);
  });

  it("LocalHaproxy: a changed config updates in place, a moved directory replaces, a dead proxy restarts", async () => {
    // A live process (this one) in the pid file stands for a running HAProxy.
    const dir = fs.mkdtempSync(nodePath.join(os.tmpdir(), "local-haproxy-"));
    try {
      fs.writeFileSync(nodePath.join(dir, "haproxy.pid"), `${process.pid}\n`);
      const a = { dir, config: "one" };
      assert.deepEqual(await localHaproxyProvider.diff("id", a, a), { changes: false });
      assert.deepEqual(await localHaproxyProvider.diff("id", a, { ...a, config: "two" }), { changes: true });
      const moved = await localHaproxyProvider.diff("id", a, { ...a, dir: "/y" });
      assert.deepEqual(moved.replaces, ["dir"]);
      // Same config, process gone: a change, so the next up starts it again.
      const gone = { dir: "/nonexistent/dir", config: "one" };
      assert.deepEqual(await localHaproxyProvider.diff("id", gone, gone), { changes: true });
      // ...and refresh drops it.
      const read = await localHaproxyProvider.read("id", gone);
      assert.equal(read.id, "");
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("reconciles on spec, deletion and finalizer changes, not on its own status writes", () => {
    const p = path("a");
    assert.ok(needsReconcile(undefined, p));
    const statusOnly = { ...p, status: readyStatus(p, { hostForConsumer: "h", port: 1 }, "T") };
    assert.ok(!needsReconcile(p, statusOnly));
    assert.ok(needsReconcile(p, { ...p, metadata: { ...p.metadata, generation: 4 } }));
    assert.ok(needsReconcile(p, { ...p, metadata: { ...p.metadata, deletionTimestamp: "T" } }));
    assert.ok(needsReconcile(p, { ...p, metadata: { ...p.metadata, finalizers: [BRIDGE_FINALIZER] } }));
  });

  it("clears only locks of this host whose process is gone", () => {
    const locks = [
      { file: "a", pid: 10, hostname: "vm" },
      { file: "b", pid: 11, hostname: "vm" },
      { file: "c", pid: 10, hostname: "other" },
      { file: "d" },
    ];
    assert.deepEqual(
      staleLocks(locks, "vm", (pid) => pid === 11).map((l) => l.file),
      ["a"],
    );
  });
});

describe("Crossplane bridge: orphaned engine processes", () => {
  it("finds leftover processes whose environment names the bridge's backend, and only those", async () => {
    const { spawn } = await import("node:child_process");
    const { findOrphans } = await import("../../bridge/orphans");
    const backend = `file:///tmp/orphan-test-${process.pid}`;
    // A detached grandchild: its parent exits at once, so it is re-parented to init.
    const parent = spawn("sh", ["-c", "sleep 30 & exit 0"], {
      env: { ...process.env, PULUMI_BACKEND_URL: backend },
      stdio: "ignore",
      detached: true,
    });
    await new Promise((r) => parent.once("exit", r));
    await new Promise((r) => setTimeout(r, 200));
    const found = findOrphans(backend);
    assert.equal(found.length, 1, "the orphaned sleep");
    assert.deepEqual(findOrphans(`${backend}-other`), []);
    for (const pid of found) process.kill(pid, "SIGKILL");
  });
});
