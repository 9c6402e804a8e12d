import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { namespacePids, runningPid, stopDaemon } from "./process-supervision";

/** A detached `sleep`, leading its own process group, as the runtime's daemons do. */
function startSleep(dir: string): { pid: number; pidFile: string } {
  const child = spawn("sleep", ["300"], { detached: true, stdio: "ignore" });
  child.unref();
  assert.ok(child.pid);
  const pidFile = path.join(dir, "sleep.pid");
  fs.writeFileSync(pidFile, `${child.pid}\n`);
  return { pid: child.pid, pidFile };
}

function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    // A zombie until its parent (this process) reaps it: dead all the same.
    return /^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true;
  }
}

describe("local WireGuard process supervision", () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "wg-supervision-"));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("a pid file names a running daemon only while that pid still runs the expected program", () => {
    const { pid, pidFile } = startSleep(dir);
    try {
      assert.equal(runningPid(pidFile, /sleep/), pid);
      // A pid recycled by another program is not ours.
      assert.equal(runningPid(pidFile, /socat/), undefined);
      assert.equal(runningPid(path.join(dir, "missing.pid"), /sleep/), undefined);
      fs.writeFileSync(path.join(dir, "bad.pid"), "not a pid\n");
      assert.equal(runningPid(path.join(dir, "bad.pid"), /sleep/), undefined);
    } finally {
      process.kill(pid, "SIGKILL");
    }
  });

  for (const policy of [{ processGroup: false, killAfterMs: 500 }, { processGroup: true }]) {
    it(`stops the daemon and removes its pid file (${JSON.stringify(policy)})`, async () => {
      const { pid, pidFile } = startSleep(dir);
      stopDaemon(pidFile, /sleep/, policy);
      assert.equal(fs.existsSync(pidFile), false);
      const deadline = Date.now() + 3000;
      while (!gone(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.ok(gone(pid), `pid ${pid} still runs`);
    });
  }

  it("leaves a process the pid file names that is not the expected program, and still removes the file", () => {
    const { pid, pidFile } = startSleep(dir);
    try {
      stopDaemon(pidFile, /socat/, { processGroup: true });
      assert.equal(fs.existsSync(pidFile), false);
      assert.equal(gone(pid), false);
    } finally {
      process.kill(pid, "SIGKILL");
    }
  });

  it("a network namespace that does not exist has no processes", () => {
    assert.deepEqual(namespacePids("klutch-no-such-netns"), []);
  });
});
