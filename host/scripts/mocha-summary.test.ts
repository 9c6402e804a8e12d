import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { repoRoot } from "../automation/toolchain";

/** host/scripts/mocha-summary.sh over a log of the spec reporter, as `npm test` calls it. */
function summary(log: string, status: number): { code: number | null; out: string } {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "klutch-summary-")), "mocha.log");
  fs.writeFileSync(file, log);
  const r = spawnSync("bash", [path.join(repoRoot, "host/scripts/mocha-summary.sh"), file, String(status)], {
    encoding: "utf8",
  });
  fs.rmSync(path.dirname(file), { recursive: true, force: true });
  return { code: r.status, out: `${r.stdout}${r.stderr}`.trim() };
}

describe("the test command's summary line (host/scripts/mocha-summary.sh)", () => {
  it("a green run: every passing count summed, 0 failed, exit 0 (no failing line is no error)", () => {
    const log = "  ✔ reports 3 failing checks in one message\n  526 passing (23s)\n\n  151 passing (16m)\n";
    assert.deepEqual(summary(log, 0), { code: 0, out: "677 passed, 0 failed" });
  });

  it("a red run: the failing counts of each run summed", () => {
    const log = "  515 passing (22s)\n\n  148 passing (19m)\n  1 failing\n\n  1) x\n";
    assert.deepEqual(summary(log, 1), { code: 0, out: "failed:\n  1) x\n663 passed, 1 failed" });
  });

  it("a red run: each failure's title and message again before the last line, without its stack", () => {
    const log = [
      "  700 passing (47s)",
      "  1 failing",
      "",
      "  1) the ports",
      "       leave no literal:",
      "      AssertionError: take these from portsFor()",
      "      at Context.<anonymous> (host/scripts/test-ports.test.ts:181:12)",
      "",
      "[file-time] test/e2e/bridge.test.ts 550.0s",
      "  2) not a failure of a failing section",
      "  190 passing (31m)",
    ].join("\n");
    const out = [
      "failed:",
      "  1) the ports",
      "       leave no literal:",
      "      AssertionError: take these from portsFor()",
      "890 passed, 1 failed",
    ].join("\n");
    assert.deepEqual(summary(log, 1), { code: 0, out });
  });

  it("a run that failed without a failing count (a crashed worker) is never reported green", () => {
    assert.deepEqual(summary("  12 passing (1s)\n", 1), {
      code: 0,
      out: "failed:\n  a mocha run exited 1 without naming a failing test: its own output above says why\n12 passed, 1 failed",
    });
  });
});
