import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { withZombie } from "../../test/helpers/zombie";
import { localHaproxyProvider } from "./local-haproxy";

describe("the local HAProxy's process (network/proxy/local-haproxy.ts pidOf)", () => {
  it("a zombie (exited, its parent never reaps it) is not running; a live process is", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-pidof-"));
    try {
      await withZombie((zombie, parent) => {
        fs.writeFileSync(path.join(dir, "haproxy.pid"), `${zombie}\n`);
        assert.equal(localHaproxyProvider.pidOf(dir), undefined);
        fs.writeFileSync(path.join(dir, "haproxy.pid"), `${parent}\n`);
        assert.equal(localHaproxyProvider.pidOf(dir), parent);
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
