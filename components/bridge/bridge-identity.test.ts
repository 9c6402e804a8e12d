import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as nodePath from "node:path";
import * as k8s from "@pulumi/kubernetes";
import { BridgeIdentity } from "./bridge-identity";
import { BridgeMetrics } from "../../programs/bridge/metrics";
import { findOrphans, instanceMarker, markerAlive, INSTANCE_ENV } from "../../programs/bridge/orphans";
import {
  BRIDGE_FINALIZER,
  backoffDelay,
  bridgeRules,
  failedStatus,
  groupKey,
  needsReconcile,
  staleLocks,
  planGroup,
  readyStatus,
  sameStatus,
  stackName,
  type NetworkPathObject,
} from "../../lib/bridge/model";
import { isManaged, realisationOf, unsupportedImplementation } from "../../network/registry";
import { localHaproxyProvider } from "../../network/proxy/local-haproxy";
import { mockPulumi, settle } from "../../test/helpers/mocks";
import { networkPath } from "../../test/helpers/network-path";

const path = (
  name: string,
  extra: Partial<NetworkPathObject["metadata"]> = {},
  ns = "team-a",
): NetworkPathObject =>
  networkPath(name, {
    metadata: { generation: 3, ...extra },
    spec: { consumerNamespace: ns, instanceHost: "10.0.0.5" },
  });

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
    for (const routed of ["awsVpcPeering", "openstack"]) assert.equal(realisationOf(routed), "routed");
    // WireGuard's forwarders are the bridge's (network/wireguard/bridge-program.ts).
    assert.equal(realisationOf("wireguard"), "forwarded");
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

  it("renders Prometheus metrics with reconcile counts, engine runs, a bounded duration histogram and process metrics", async () => {
    const m = new BridgeMetrics();
    m.recordReconcile("success", 3.2);
    m.recordReconcile("error", 0.4);
    m.recordEngineRun();
    m.recordCheckpointRecovery("restore");
    m.setPathsNotRealised("team-a/proxy", { PortRangeExhausted: 3 });
    m.setPathsNotRealised("team-b/proxy", { PortRangeExhausted: 1, InvalidConnection: 1 });
    m.setPathsNotRealised("team-b/proxy", {});
    // Constant memory: a million observations leave the histogram's size unchanged.
    const before = (await m.render()).length;
    for (let i = 0; i < 100_000; i++) m.recordReconcile("success", i % 7);
    assert.ok(Math.abs((await m.render()).length - before) < 200, "the histogram does not grow");
    const text = await m.render();
    assert.match(text, /klutch_bridge_checkpoint_recoveries_total\{action="restore"\} 1/);
    assert.match(text, /klutch_bridge_paths_not_realised\{reason="PortRangeExhausted"\} 3/);
    assert.doesNotMatch(text, /reason="InvalidConnection"/);
    assert.match(text, /^process_resident_memory_bytes \d+/m);
    assert.match(text, /^nodejs_eventloop_lag_seconds /m);
    assert.match(text, /klutch_bridge_leader 1/);
    assert.match(text, /klutch_bridge_reconciles_total\{result="success"\} 100001/);
    assert.match(text, /klutch_bridge_reconciles_total\{result="error"\} 1/);
    assert.match(text, /klutch_bridge_engine_runs_total 1/);
    // 0.4 s, plus the 0 s of every seventh observation.
    assert.match(text, /klutch_bridge_reconcile_duration_seconds_bucket\{le="0.5"\} 14287/);
    assert.match(text, /klutch_bridge_reconcile_duration_seconds_count 100002/);
  });

  it("the bridge's RBAC names its resources and verbs: no wildcard, nothing but NetworkPaths, events and annotating composites", () => {
    for (const r of bridgeRules()) {
      assert.ok(![...r.apiGroups, ...r.resources, ...r.verbs].includes("*"));
    }
    assert.deepEqual(
      bridgeRules().flatMap((r) => r.resources),
      ["networkpaths", "networkpaths/status", "xtcpconnections", "xservicebindings", "events"],
    );
    assert.deepEqual(bridgeRules().find((r) => r.resources.includes("xtcpconnections"))?.verbs, [
      "get",
      "patch",
    ]);
    // The owner of a connection is only annotated (its readiness relayed), never read or changed.
    assert.deepEqual(
      bridgeRules().find((r) => r.resources.includes("xservicebindings")),
      {
        apiGroups: ["anynines.com"],
        resources: ["xservicebindings"],
        verbs: ["patch"],
      },
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

  it("with an IAM role (bridge.awsRoleArn), the ServiceAccount carries the annotation EKS's pod identity webhook reads; without, none", async () => {
    const run = mockPulumi({});
    const provider = new k8s.Provider("cp", { kubeconfig: "fake" });
    const role = "arn:aws:iam::123456789012:role/klutch-bridge";
    new BridgeIdentity("with", { provider, namespace: "klutch-network", awsRoleArn: role });
    new BridgeIdentity("without", { provider, namespace: "klutch-network" });
    await settle();
    const account = (name: string) =>
      run.ofType("kubernetes:core/v1:ServiceAccount").find((r) => r.name === `${name}-account`)!;
    assert.deepEqual(account("with").inputs.metadata.annotations, { "eks.amazonaws.com/role-arn": role });
    assert.equal(account("without").inputs.metadata.annotations, undefined);
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

  it("reconciles on spec, deletion and the loss of its finalizer, not on its own status and finalizer writes", () => {
    const p = path("a");
    assert.ok(needsReconcile(undefined, p));
    const statusOnly = { ...p, status: readyStatus(p, { hostForConsumer: "h", port: 1 }, "T") };
    assert.ok(!needsReconcile(p, statusOnly));
    assert.ok(needsReconcile(p, { ...p, metadata: { ...p.metadata, generation: 4 } }));
    assert.ok(needsReconcile(p, { ...p, metadata: { ...p.metadata, deletionTimestamp: "T" } }));
    const held = { ...p, metadata: { ...p.metadata, finalizers: [BRIDGE_FINALIZER] } };
    assert.ok(!needsReconcile(p, held), "adding its own finalizer is the bridge's own write");
    assert.ok(needsReconcile(held, p), "a removed finalizer is put back");
  });

  it("clears only locks of this host whose process is gone, and lock files that do not parse", () => {
    const locks = [
      { file: "a", pid: 10, hostname: "vm" },
      { file: "b", pid: 11, hostname: "vm" },
      { file: "c", pid: 10, hostname: "other" },
      { file: "d" },
    ];
    assert.deepEqual(
      staleLocks(locks, "vm", (pid) => pid === 11).map((l) => l.file),
      ["a", "d"],
    );
    // Holding the leader lease, another host's lock is a former leader's (killed mid-update).
    assert.deepEqual(
      staleLocks(locks, "vm", (pid) => pid === 11, true).map((l) => l.file),
      ["a", "c", "d"],
    );
  });
});

describe("Crossplane bridge: orphaned engine processes", () => {
  it("reaps only processes a bridge that is gone started on this backend: an operator's pulumi and a live bridge's engine survive", async () => {
    const backend = `file:///tmp/orphan-test-${process.pid}`;
    /** A detached grandchild (its parent exits at once, so it is re-parented to init), with `env`. */
    const orphan = async (env: Record<string, string>): Promise<number> => {
      const parent = spawn("sh", ["-c", "sleep 30 & echo $!; exit 0"], {
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
        stdio: ["ignore", "pipe", "ignore"],
        detached: true,
      });
      let out = "";
      parent.stdout.on("data", (d: Buffer) => (out += d.toString()));
      await new Promise((r) => parent.once("exit", r));
      return Number(out.trim());
    };
    // A bridge that is gone: its marker names a pid whose start time no longer matches.
    const deadBridge = `${process.pid}:1:deadbeef`;
    assert.equal(markerAlive(deadBridge), false);
    const liveBridge = instanceMarker();
    assert.equal(markerAlive(liveBridge), true, "this process stands for a live bridge");
    const leftover = await orphan({ PULUMI_BACKEND_URL: backend, [INSTANCE_ENV]: deadBridge });
    // The decoy: an operator's own pulumi on the same backend, started by no bridge.
    const operators = await orphan({ PULUMI_BACKEND_URL: backend });
    const otherReplica = await orphan({ PULUMI_BACKEND_URL: backend, [INSTANCE_ENV]: liveBridge });
    const otherBackend = await orphan({ PULUMI_BACKEND_URL: `${backend}-other`, [INSTANCE_ENV]: deadBridge });
    try {
      assert.deepEqual(findOrphans(backend), [leftover], "only the dead bridge's leftover on this backend");
      assert.deepEqual(findOrphans(`${backend}-other`), [otherBackend]);
    } finally {
      for (const pid of [leftover, operators, otherReplica, otherBackend]) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // Gone already.
        }
      }
    }
  });
});
