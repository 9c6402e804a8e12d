import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as nodePath from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { checkpointPaths, recoverCheckpoint } from "./checkpoint";
import { engineError } from "./controller";
import { groupProgram, type Target } from "./program";
import {
  checkpointProblem,
  newestBackupsFirst,
  planCheckpointRecovery,
  sidecarReadable,
} from "../../lib/bridge/checkpoint";
import { EngineDiagnostics, urnParts, withoutSdkLogLines } from "../../lib/bridge/diagnostics";
import {
  portRangeExhausted,
  problemStatus,
  readyStatus,
  statusEvent,
  failedStatus,
  type PathEndpoint,
  type NetworkPathObject,
  type PathProblem,
} from "../../lib/bridge/model";
import { admitConnections } from "../../network/proxy/model/admission";
import { planPorts } from "../../network/proxy/model/port-planner";
import { portAllocationProvider } from "../../network/proxy/port-allocation";
import { mockPulumi, settle, valueOf } from "../../test/helpers/mocks";
import { networkPath } from "../../test/helpers/network-path";

const GOOD = JSON.stringify({
  version: 3,
  checkpoint: { stack: "organization/p/s", latest: { resources: [] } },
});

const path = (name: string): NetworkPathObject =>
  networkPath(name, { metadata: { generation: 2 }, spec: { instanceHost: "10.0.0.5" } });

describe("Crossplane bridge: unreadable checkpoints", () => {
  it("tells a loadable checkpoint from an empty, truncated or foreign file", () => {
    assert.equal(checkpointProblem(GOOD), undefined);
    assert.equal(checkpointProblem(""), "the file is empty");
    assert.match(checkpointProblem(GOOD.slice(0, GOOD.length / 2)) ?? "", /^the file is not JSON/);
    assert.equal(checkpointProblem("[]"), "the checkpoint has no version");
    assert.equal(checkpointProblem('{"version":3}'), "the file holds no checkpoint");
  });

  it("restores the first usable older copy, else re-creates; leaves a good or missing checkpoint alone", () => {
    assert.deepEqual(planCheckpointRecovery(undefined, []), { action: "none" }, "a new or removed stack");
    assert.deepEqual(planCheckpointRecovery(GOOD, [{ file: "bak", text: "" }]), { action: "none" });
    assert.deepEqual(
      planCheckpointRecovery("", [
        { file: "s.json.bak", text: "{" },
        { file: "s.2.json", text: GOOD },
        { file: "s.1.json", text: GOOD },
      ]),
      { action: "restore", problem: "the file is empty", from: "s.2.json", text: GOOD },
    );
    assert.deepEqual(planCheckpointRecovery("", [{ file: "s.json.bak", text: "" }]), {
      action: "recreate",
      problem: "the file is empty",
    });
  });

  it("orders the backups directory by its nanosecond stamps, not as text", () => {
    assert.deepEqual(
      newestBackupsFirst("np-a", [
        "np-a.999.json",
        "np-a.1000.json",
        "np-ab.5000.json",
        "other",
        "np-a.5.json.gz",
      ]),
      ["np-a.1000.json", "np-a.999.json"],
    );
  });

  it("repairs a backend on disk: restores the .bak, else the newest backup, else moves the file aside", () => {
    const root = fs.mkdtempSync(nodePath.join(os.tmpdir(), "checkpoint-"));
    try {
      const { file, bak, backupsDir } = checkpointPaths(root, "proj", "np-a");
      assert.equal(file, nodePath.join(root, ".pulumi", "stacks", "proj", "np-a.json"));
      fs.mkdirSync(nodePath.dirname(file), { recursive: true });
      fs.mkdirSync(backupsDir, { recursive: true });
      assert.deepEqual(
        recoverCheckpoint(root, "proj", "np-a"),
        { action: "none", sidecars: [] },
        "no checkpoint yet",
      );

      // Truncated to 0 bytes, a good .bak beside it.
      fs.writeFileSync(file, "");
      fs.writeFileSync(bak, GOOD);
      const restored = recoverCheckpoint(root, "proj", "np-a");
      assert.equal(restored.action, "restore");
      assert.equal(fs.readFileSync(file, "utf8"), GOOD);
      assert.ok(fs.readdirSync(nodePath.dirname(file)).some((f) => f.startsWith("np-a.json.corrupt-")));

      // Truncated to half, the .bak broken too: the newest backup.
      const newer = GOOD.replace("resources", "resources");
      fs.writeFileSync(file, GOOD.slice(0, 20));
      fs.writeFileSync(bak, GOOD.slice(0, 10));
      fs.writeFileSync(nodePath.join(backupsDir, "np-a.100.json"), "{");
      fs.writeFileSync(nodePath.join(backupsDir, "np-a.99.json"), newer);
      const fromBackup = recoverCheckpoint(root, "proj", "np-a");
      assert.equal(fromBackup.action, "restore");
      assert.equal(fromBackup.action === "restore" && nodePath.basename(fromBackup.from), "np-a.99.json");

      // Nothing usable: the stack is created anew.
      fs.writeFileSync(file, "");
      fs.rmSync(backupsDir, { recursive: true });
      fs.writeFileSync(`${file}.attrs`, "{}");
      assert.equal(recoverCheckpoint(root, "proj", "np-a").action, "recreate");
      assert.ok(!fs.existsSync(file) && !fs.existsSync(`${file}.attrs`));
      assert.deepEqual(recoverCheckpoint(root, "proj", "np-a"), { action: "none", sidecars: [] });

      // What the kill trials hit: the checkpoint is fine, its metadata sidecar empty (a
      // SIGKILL during fileblob's non-atomic write); only unreadable sidecars go.
      fs.writeFileSync(file, GOOD);
      fs.writeFileSync(`${file}.attrs`, "");
      fs.writeFileSync(`${bak}.attrs`, '{"user.content_type":"text/plain"}');
      const locks = nodePath.join(root, ".pulumi", "locks", "organization", "proj", "np-a");
      fs.mkdirSync(locks, { recursive: true });
      fs.writeFileSync(nodePath.join(locks, "x.json.attrs"), '{"user.cont');
      const repaired = recoverCheckpoint(root, "proj", "np-a");
      assert.equal(repaired.action, "none");
      assert.deepEqual(repaired.sidecars.map((f) => nodePath.basename(f)).sort(), [
        "np-a.json.attrs",
        "x.json.attrs",
      ]);
      assert.ok(fs.existsSync(`${bak}.attrs`), "a readable sidecar stays");
      assert.equal(sidecarReadable(""), false);
      assert.equal(sidecarReadable("[]"), false);
      assert.equal(sidecarReadable('{"md5":"x"}'), true);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

describe("Crossplane bridge: one bad connection never takes its group down", () => {
  it("the port planner leaves out only what does not fit: placed ids keep their ports, required ids come first", () => {
    const range = { from: 100, to: 104 };
    const first = planPorts({
      range,
      ids: ["b", "d", "~h", "~s"],
      required: ["~h", "~s"],
      overflow: "leave-out",
    });
    assert.deepEqual(first.unplaced, []);
    // Three more arrive, two ports are left... one port: 5 - 4 = 1.
    const second = planPorts({
      range,
      ids: ["a", "b", "c", "d", "e", "~h", "~s"],
      required: ["~h", "~s"],
      overflow: "leave-out",
      previous: first.assignments,
      released: first.released,
    });
    for (const id of ["b", "d", "~h", "~s"]) assert.equal(second.assignments[id], first.assignments[id], id);
    assert.deepEqual(Object.keys(second.assignments).sort(), ["a", "b", "d", "~h", "~s"]);
    assert.deepEqual(second.unplaced, ["c", "e"]);
    // The default still refuses, naming the fix.
    assert.throws(
      () => planPorts({ range, ids: ["a", "b", "c", "d", "e", "f"] }),
      /port range 100-104 has 5 usable ports but 6 connections need one: widen portRange \(e\.g\. to: 105\)/,
    );
    // Widened: the left-out ones get ports, nobody moves.
    const third = planPorts({
      range: { from: 100, to: 106 },
      ids: ["a", "b", "c", "d", "e", "~h", "~s"],
      overflow: "leave-out",
      previous: second.assignments,
      released: second.released,
    });
    assert.deepEqual(third.unplaced, []);
    for (const [id, port] of Object.entries(second.assignments)) assert.equal(third.assignments[id], port);
    // A connection leaving frees its port for one that waited.
    const fourth = planPorts({
      range,
      ids: ["a", "c", "d", "e", "~h", "~s"],
      overflow: "leave-out",
      previous: second.assignments,
      released: second.released,
    });
    assert.deepEqual(fourth.unplaced, ["e"]);
    assert.equal(fourth.assignments.c, second.assignments.b);
  });

  it("PortAllocation with overflow leave-out reports unplaced ids instead of failing; old state without the field still diffs clean", async () => {
    const inputs = {
      range: { from: 100, to: 102 },
      ids: ["a", "b", "c", "~h"],
      reserved: [],
      overflow: "leave-out" as const,
      required: ["~h"],
    };
    const checked = await portAllocationProvider.check(inputs, inputs);
    assert.equal(checked.failures, undefined);
    const { outs: created } = await portAllocationProvider.create(inputs);
    assert.deepEqual(created!.unplaced, ["c"]);
    assert.ok(created!.assignments["~h"]);
    const bad = await portAllocationProvider.check(inputs, { ...inputs, overflow: "drop" as never });
    assert.deepEqual(
      bad.failures?.map((f) => f.property),
      ["overflow"],
    );
    const old = { range: inputs.range, ids: inputs.ids, reserved: [] };
    assert.equal(
      (await portAllocationProvider.diff("id", { ...old, assignments: {}, released: [] }, old)).changes,
      false,
    );
    assert.equal(
      (await portAllocationProvider.diff("id", { ...old, assignments: {}, released: [] }, inputs)).changes,
      true,
      "switching to leave-out re-plans once",
    );
  });

  it("a PortAllocation created anew (lost checkpoint) hands out the ports the paths report, ignoring the seed later", async () => {
    const inputs = {
      range: { from: 100, to: 109 },
      ids: ["a", "b", "c", "~h", "~s"],
      reserved: [],
      overflow: "leave-out" as const,
      required: ["~h", "~s"],
      seed: { a: 107, b: 103, c: 999 },
    };
    const { outs } = await portAllocationProvider.create(inputs);
    assert.equal(outs?.assignments.a, 107);
    assert.equal(outs?.assignments.b, 103);
    assert.ok(outs?.assignments.c !== undefined && outs.assignments.c !== 999, "out of range: a new port");
    assert.ok(outs);
    const changed = await portAllocationProvider.diff("id", outs, { ...inputs, seed: { a: 1 } });
    assert.equal(changed.changes, false, "a new seed alone changes nothing");
  });

  it("admits connections one by one: a bad host or a taken TLS server name is rejected alone", () => {
    const sni = (id: string) => ({
      id,
      instanceHost: "10.0.0.1",
      port: 5432,
      enhancements: [{ ConnectionType: "tlsSNI", serverName: "pg.example.com" }],
    });
    const { admitted, rejected } = admitConnections([
      { id: "ok", instanceHost: "db.svc", port: 5432 },
      { id: "unresolvable", instanceHost: "nowhere.invalid", port: 5432 },
      { id: "bad", instanceHost: "no such host", port: 5432 },
      { id: "port", instanceHost: "10.0.0.1", port: 70000 },
      sni("sni-1"),
      sni("sni-2"),
    ]);
    assert.deepEqual(
      admitted.map((c) => c.id),
      ["ok", "unresolvable", "sni-1"],
    );
    assert.deepEqual(Object.keys(rejected), ["bad", "port", "sni-2"]);
    assert.match(rejected.bad?.message ?? "", /^spec\.instanceHost "no such host" is neither/);
    assert.match(rejected.port?.message ?? "", /^spec\.port must be a whole number from 1 to 65535/);
    assert.match(rejected["sni-2"]?.message ?? "", /already used by sni-1/);
    assert.equal(rejected.bad?.reason, "InvalidConnection");
  });

  it("a path left out is Ready=False and Synced=False with the reason and the fix, and loses a port it had", () => {
    const problem = portRangeExhausted("team-a/proxy", { from: 43000, to: 43005 }, 2, 6, "local");
    assert.equal(problem.reason, "PortRangeExhausted");
    assert.match(
      problem.message,
      /raise that \(or widen --port-range\) so the group can have at least 8 ports, or remove 2/,
    );
    assert.match(
      portRangeExhausted("ns/proxy", { from: 30000, to: 30001 }, 0, 3, "kubernetes").message,
      /widen the app cluster's networkConnector\.portRange \(or the bridge's --port-range\) to at least 3 ports/,
    );
    const p = path("e");
    p.status = readyStatus(p, { hostForConsumer: "127.0.0.1", port: 43004 }, "T1");
    const s = problemStatus(p, problem, "T2");
    assert.equal(s.hostForConsumer, undefined);
    assert.equal(s.port, undefined);
    assert.deepEqual(
      s.conditions?.map((c) => [c.type, c.status, c.reason, c.lastTransitionTime]),
      [
        ["Ready", "False", "PortRangeExhausted", "T2"],
        ["Synced", "False", "PortRangeExhausted", "T2"],
      ],
    );
  });

  it("proxy (kubernetes target): a range too small leaves the last connections out, not the group", async () => {
    mockPulumi({}, "test", {
      dynamicProviders: { "pulumi-nodejs:dynamic/klutch:PortAllocation": portAllocationProvider },
    });
    const target: Target = {
      kind: "kubernetes",
      kubeconfig: "apiVersion: v1\nkind: Config\n",
      namespace: "klutch-network",
      portRange: { from: 30000, to: 30001 },
      serviceType: "ClusterIP",
      skipAwait: true,
    };
    const outputs = await groupProgram("team-a/proxy", [path("a"), path("b"), path("c")], target)();
    const endpoints = await valueOf(outputs.endpoints as pulumi.Output<Record<string, PathEndpoint>>);
    const problems = await valueOf(outputs.problems as pulumi.Output<Record<string, PathProblem>>);
    await settle();
    assert.deepEqual(Object.keys(endpoints).sort(), ["a", "b"]);
    assert.deepEqual(Object.keys(problems), ["c"]);
    assert.match(problems.c?.message ?? "", /30000-30001, 2 ports, and 3 connections need one/);
  });

  it("each outcome has its Event: Normal PathReady, else a Warning with the condition's reason", () => {
    const p = path("a");
    assert.deepEqual(statusEvent(readyStatus(p, { hostForConsumer: "h", port: 1 }, "T")), {
      type: "Normal",
      reason: "PathReady",
      message: "TCP connection available at h:1",
    });
    const probe = { ready: false, reason: "ConnectionRefused", message: "refused" };
    assert.equal(
      statusEvent(readyStatus(p, { hostForConsumer: "h", port: 1, probe }, "T")).reason,
      "ProbeFailed",
    );
    assert.equal(statusEvent(failedStatus(p, "boom", "T")).reason, "ReconcileError");
    assert.deepEqual(statusEvent(problemStatus(p, { reason: "InvalidConnection", message: "m" }, "T")), {
      type: "Warning",
      reason: "InvalidConnection",
      message: "m",
    });
  });
});

describe("Crossplane bridge: engine diagnostics", () => {
  const urn = "urn:pulumi:np-team-a-proxy::klutch-network-paths::pulumi-nodejs:dynamic:Resource::ports";

  it("names the failed resource, its operation and the provider's message, not the output's tail", () => {
    const d = new EngineDiagnostics();
    d.onEvent({ diagnosticEvent: { severity: "info", message: "noise" } });
    d.onEvent({
      resOpFailedEvent: { metadata: { op: "update", urn, type: "pulumi-nodejs:dynamic:Resource" } },
    });
    d.onEvent({
      diagnosticEvent: {
        urn,
        severity: "error",
        message:
          "\u001b[31mport range 43000-43049 has 48 usable ports\nbut 49 connections need one\u001b[0m\n",
      },
    });
    d.onEvent({ diagnosticEvent: { severity: "error", message: "update failed" } });
    assert.equal(
      d.summary(),
      'pulumi-nodejs:dynamic:Resource "ports" (update): port range 43000-43049 has 48 usable ports but 49 connections need one',
    );
    assert.equal(engineError(new Error("a\nb\nc\n2 errored"), d), d.summary());
  });

  it("falls back to the error's last lines when the engine said nothing (it never ran)", () => {
    const d = new EngineDiagnostics();
    assert.equal(d.summary(), undefined);
    assert.equal(engineError(new Error("x\n\nstack is locked"), d), "x\nstack is locked");
    d.onEvent({ diagnosticEvent: { severity: "error", message: "program failed: boom" } });
    assert.equal(d.summary(), "program failed: boom");
  });

  it("leaves the AWS SDK's own log lines out of the message (an s3:// backend on a server that sends no checksum)", () => {
    const warn =
      "SDK 2026/12/05 22:51:12 WARN Response has no supported checksum. Not validating response payload.";
    const locked =
      "error: the stack is currently locked by 1 lock(s). Either wait for the other process(es) to end or delete the lock file with `pulumi cancel`.";
    const d = new EngineDiagnostics();
    assert.equal(engineError(new Error(`${warn}\n${warn}\n${locked}\n${warn}`), d), locked);
    d.onEvent({ diagnosticEvent: { severity: "error", message: `${warn}\nprogram failed: boom\n` } });
    assert.equal(d.summary(), "program failed: boom");
    // A line that only mentions the SDK is the engine's, and stays.
    assert.equal(withoutSdkLogLines("SDK says WARN here"), "SDK says WARN here");
  });

  it("reads type and name from URNs, nested parents included", () => {
    assert.deepEqual(
      urnParts("urn:pulumi:s::p::klutch:network:TcpProxy$kubernetes:apps/v1:Deployment::np-a"),
      {
        type: "kubernetes:apps/v1:Deployment",
        name: "np-a",
      },
    );
    assert.equal(urnParts("nonsense"), undefined);
  });
});
