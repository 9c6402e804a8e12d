import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { localHaproxyProvider } from "./local-haproxy";

/** Polls `check` every 50 ms for up to 5 s. */
async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`${what} did not happen within 5 s`);
}

describe("the local HAProxy's process (network/proxy/local-haproxy.ts pidOf)", () => {
  it("a zombie (exited, its parent never reaps it) is not running; a live process is", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-pidof-"));
    // `sleep 0` exits at once; its parent is then `sleep 30` (the shell exec'd it), which never
    // waits for children, so the exited one stays a zombie, as a killed HAProxy does under an
    // init that is slow to reap.
    const parent = spawn("sh", ["-c", "sleep 0 & echo $!; exec sleep 30"], {
      stdio: ["ignore", "pipe", "ignore"],
    });
    try {
      const zombie = Number(
        await new Promise<string>((resolve) =>
          parent.stdout.once("data", (b: Buffer) => resolve(b.toString())),
        ),
      );
      await until(`process ${zombie} to be a zombie`, () =>
        / Z /.test(fs.readFileSync(`/proc/${zombie}/stat`, "utf8")),
      );
      fs.writeFileSync(path.join(dir, "haproxy.pid"), `${zombie}\n`);
      assert.equal(localHaproxyProvider.pidOf(dir), undefined);
      fs.writeFileSync(path.join(dir, "haproxy.pid"), `${parent.pid}\n`);
      assert.equal(localHaproxyProvider.pidOf(dir), parent.pid);
    } finally {
      parent.kill("SIGKILL");
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
