import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { Deployment } from "@pulumi/pulumi/automation";
import { withZombie } from "../../test/helpers/zombie";
import { StackLocks, processAlive, type PendingOperationsStack, type StaleLockStack } from "./stack-locks";

const PROJECT = "proj";
const STACK = "np-a";

describe("StackLocks: what an interrupted update leaves on a file-backend stack", () => {
  let root: string;
  beforeEach(() => (root = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-stack-locks-"))));
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  const lockDir = () => path.join(root, ".pulumi", "locks", "organization", PROJECT, STACK);
  const writeLock = (name: string, content: string) => {
    fs.mkdirSync(lockDir(), { recursive: true });
    fs.writeFileSync(path.join(lockDir(), name), content);
    return path.join(lockDir(), name);
  };
  const files = (locks: { file: string }[]) => locks.map((l) => l.file).sort();
  /** The locks as the bridge on "bridge-host" sees them, where only pid 100 runs. */
  const locksOnBridgeHost = () =>
    new StackLocks({
      backendDir: root,
      project: PROJECT,
      hostname: "bridge-host",
      alive: (pid) => pid === 100,
    });

  describe("inspect: live and stale locks", () => {
    const locks = locksOnBridgeHost;

    it("finds none without a file backend, or on a stack never locked", () => {
      writeLock("a.json", JSON.stringify({ pid: 200, hostname: "bridge-host" }));
      assert.deepEqual(new StackLocks({ backendDir: undefined, project: PROJECT }).inspect(STACK), {
        live: [],
        stale: [],
      });
      assert.deepEqual(locks().inspect("np-other"), { live: [], stale: [] });
    });

    it("a lock of a live process here, or of another host, is live; a dead process's or a broken file is stale", () => {
      const running = writeLock("running.json", JSON.stringify({ pid: 100, hostname: "bridge-host" }));
      const replica = writeLock("replica.json", JSON.stringify({ pid: 200, hostname: "other-host" }));
      const killed = writeLock("killed.json", JSON.stringify({ pid: 200, hostname: "bridge-host" }));
      const broken = writeLock("broken.json", "{");
      writeLock("running.json.attrs", "{}");
      const state = locks().inspect(STACK);
      assert.deepEqual(files(state.live), [replica, running].sort());
      assert.deepEqual(files(state.stale), [broken, killed].sort());
      assert.deepEqual(
        state.stale.find((l) => l.file === killed),
        { file: killed, pid: 200, hostname: "bridge-host" },
        "the pid is what the bridge logs when it clears the lock",
      );
    });

    it("by default asks this machine: this very process holds a live lock", () => {
      const mine = writeLock("mine.json", JSON.stringify({ pid: process.pid, hostname: os.hostname() }));
      const state = new StackLocks({ backendDir: root, project: PROJECT }).inspect(STACK);
      assert.deepEqual(files(state.live), [mine]);
      assert.deepEqual(state.stale, []);
    });
  });

  describe("clearPendingOperations", () => {
    let exported: number;
    let imported: Deployment[];
    let warnings: { msg: string; fields?: Record<string, unknown> }[];
    let deployment: Deployment;
    const engine: PendingOperationsStack = {
      exportStack: () => {
        exported++;
        return Promise.resolve(structuredClone(deployment));
      },
      importStack: (state) => Promise.resolve(void imported.push(state)),
    };
    const log = (_level: "warn", msg: string, fields?: Record<string, unknown>) =>
      void warnings.push({ msg, fields });
    const writeCheckpoint = (pending: unknown[]) => {
      const file = path.join(root, ".pulumi", "stacks", PROJECT, `${STACK}.json`);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(
        file,
        JSON.stringify({ version: 3, checkpoint: { latest: { pending_operations: pending } } }),
      );
    };

    beforeEach(() => {
      exported = 0;
      imported = [];
      warnings = [];
      deployment = {
        version: 3,
        deployment: { pending_operations: [{ type: "creating" }, { type: "updating" }] },
      };
    });
    const locks = () => new StackLocks({ backendDir: root, project: PROJECT });

    it("asks the engine nothing for a new stack, or a checkpoint that records none", async () => {
      await locks().clearPendingOperations(STACK, engine, log);
      writeCheckpoint([]);
      await locks().clearPendingOperations(STACK, engine, log);
      assert.equal(exported, 0);
      assert.deepEqual(imported, []);
    });

    it("drops the pending operations the checkpoint records, through the engine, and says how many", async () => {
      writeCheckpoint([{ type: "creating" }, { type: "updating" }]);
      await locks().clearPendingOperations(STACK, engine, log);
      assert.equal(exported, 1);
      assert.deepEqual(imported, [{ version: 3, deployment: { pending_operations: [] } }]);
      assert.deepEqual(warnings, [
        { msg: "clearing pending operations of an interrupted update", fields: { count: 2 } },
      ]);
    });

    it("asks the engine when the backend is no file backend, and imports nothing when it has none", async () => {
      deployment = { version: 3, deployment: {} };
      await new StackLocks({ backendDir: undefined, project: PROJECT }).clearPendingOperations(
        STACK,
        engine,
        log,
      );
      assert.equal(exported, 1);
      assert.deepEqual(imported, []);
      assert.deepEqual(warnings, []);
    });
  });
  describe("releaseStale", () => {
    let calls: string[];
    let warnings: { msg: string; fields?: Record<string, unknown> }[];
    const engine: StaleLockStack = {
      cancel: () => Promise.resolve(void calls.push("cancel")),
      exportStack: () => Promise.resolve(void calls.push("export") as unknown as Deployment),
      importStack: () => Promise.resolve(void calls.push("import")),
    };
    const log = (_level: "warn", msg: string, fields?: Record<string, unknown>) =>
      void warnings.push({ msg, fields });
    const locks = locksOnBridgeHost;
    beforeEach(() => {
      calls = [];
      warnings = [];
    });

    it("cancels a stale lock through the engine and names the update it was left by", async () => {
      writeLock("killed.json", JSON.stringify({ pid: 200, hostname: "bridge-host" }));
      await locks().releaseStale(STACK, engine, log, "a cancelled update whose CLI is gone");
      assert.deepEqual(calls, ["cancel"], "no checkpoint, so no pending operation to look for");
      assert.deepEqual(warnings, [
        {
          msg: "clearing the lock of a cancelled update whose CLI is gone",
          fields: { locks: [200] },
        },
      ]);
    });

    it("on a remote backend, a leader cancels once per stack whatever an earlier leader left; without leader election it cancels nothing", async () => {
      const engine: StaleLockStack = {
        cancel: () => Promise.resolve(void calls.push("cancel")),
        exportStack: () => {
          calls.push("export");
          return Promise.resolve({ version: 3, deployment: {} });
        },
        importStack: () => Promise.resolve(void calls.push("import")),
      };
      const remote = new StackLocks({ backendDir: undefined, project: PROJECT, leaderElected: true });
      await remote.releaseStale(STACK, engine, log, "an interrupted update");
      await remote.releaseStale(STACK, engine, log, "an interrupted update");
      await remote.releaseStale("np-b", engine, log, "an interrupted update");
      // The pending operations are asked for through the engine on every run, as before.
      assert.deepEqual(calls, ["cancel", "export", "export", "cancel", "export"]);
      assert.deepEqual(
        warnings.map((w) => w.fields),
        [{ stack: STACK }, { stack: "np-b" }],
      );
      calls = [];
      const single = new StackLocks({ backendDir: undefined, project: PROJECT });
      await single.releaseStale(STACK, engine, log, "an interrupted update");
      assert.deepEqual(calls, ["export"]);
    });

    it("after a run whose engine could not delete its lock: a leader on a remote backend clears it, others name it", async () => {
      // What the CLI prints then (pulumi pkg/backend/diy/lock.go Unlock), among the SDK's lines.
      const url = `s3://state/ha/.pulumi/locks/organization/${PROJECT}/${STACK}/3f1c.json`;
      const stderr = [
        "SDK 2026/12/05 22:51:15 WARN Response has no supported checksum. Not validating response payload.",
        `error: there was a problem deleting the lock at ${url}, manual clean up may be required: context deadline exceeded`,
      ].join("\n");
      const leader = new StackLocks({ backendDir: undefined, project: PROJECT, leaderElected: true });
      await leader.afterRun(STACK, engine, "", log);
      await leader.afterRun(STACK, engine, "warning: something else\n", log);
      assert.deepEqual(calls, [], "nothing to clear after a run that deleted its lock");
      await leader.afterRun(STACK, engine, stderr, log);
      assert.deepEqual(calls, ["cancel"]);
      assert.deepEqual(warnings, [
        {
          msg: "the engine could not delete its lock when the run ended; cleared it",
          fields: { stack: STACK, lock: url, cause: "context deadline exceeded" },
        },
      ]);
      calls = [];
      warnings = [];
      // Without leader election another bridge may hold a lock of its own: named, not cleared.
      await new StackLocks({ backendDir: undefined, project: PROJECT }).afterRun(STACK, engine, stderr, log);
      // On the file backend the next run finds it stale by its pid (inspect).
      await locks().afterRun(STACK, engine, stderr, log);
      assert.deepEqual(calls, []);
      assert.deepEqual(
        warnings.map((w) => w.fields?.fix),
        [`pulumi cancel --stack ${STACK}, once no update runs`, undefined],
      );
    });

    it("leaves a lock whose process runs, and a stack with no lock, alone", async () => {
      await locks().releaseStale(STACK, engine, log, "an interrupted update");
      writeLock("running.json", JSON.stringify({ pid: 100, hostname: "bridge-host" }));
      await locks().releaseStale(STACK, engine, log, "an interrupted update");
      assert.deepEqual(calls, []);
      assert.deepEqual(warnings, []);
    });
  });
});

describe("processAlive: whether the process of a lock still runs", () => {
  it("a live process runs; a zombie (a killed update's CLI not reaped yet) and a gone pid do not", async () => {
    await withZombie((zombie, parent) => {
      assert.equal(processAlive(parent), true);
      assert.equal(processAlive(zombie), false);
    });
    assert.equal(processAlive(2 ** 22 + 1), false, "above Linux's pid_max: no such process");
  });
});
