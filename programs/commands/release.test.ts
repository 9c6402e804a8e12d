import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { LAUNCHER } from "./release";

/**
 * The release archive's launcher (programs/commands/release.ts), run by /bin/sh as the engine runs a plugin,
 * against a stand-in `node` on PATH that reports a given version and records how it was called.
 */
function launch(nodeVersion: string | undefined): { code: number | null; out: string; calledWith: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-launcher-"));
  // PATH is this folder only: what the launcher runs besides node (dirname), and the stand-in.
  const bin = path.join(dir, "bin");
  fs.mkdirSync(bin);
  fs.symlinkSync(
    spawnSync("sh", ["-c", "command -v dirname"], { encoding: "utf8" }).stdout.trim(),
    path.join(bin, "dirname"),
  );
  const plugin = path.join(dir, "plugin");
  fs.mkdirSync(plugin);
  fs.writeFileSync(path.join(plugin, "pulumi-resource-klutch"), LAUNCHER, { mode: 0o755 });
  const calls = path.join(dir, "calls");
  if (nodeVersion !== undefined)
    fs.writeFileSync(
      path.join(bin, "node"),
      [
        "#!/bin/sh",
        // `node -p '<expr>'` asks for the major; anything else is the plugin being run.
        `if [ "$1" = "-p" ]; then echo "${nodeVersion.split(".")[0]}"; exit 0; fi`,
        `if [ "$1" = "--version" ]; then echo "v${nodeVersion}"; exit 0; fi`,
        `echo "$@" > "${calls}"`,
      ].join("\n"),
      { mode: 0o755 },
    );
  const r = spawnSync(path.join(plugin, "pulumi-resource-klutch"), ["127.0.0.1:1234"], {
    encoding: "utf8",
    env: { PATH: bin },
  });
  const calledWith = fs.existsSync(calls) ? fs.readFileSync(calls, "utf8").trim() : "";
  fs.rmSync(dir, { recursive: true, force: true });
  return { code: r.status, out: `${r.stdout}${r.stderr}`.trim(), calledWith };
}

describe("the release's plugin launcher (programs/commands/release.ts)", () => {
  it("runs the bundle beside it on a Node.js 24, passing the engine's arguments", () => {
    const r = launch("24.21.0");
    assert.equal(r.code, 0, r.out);
    assert.match(r.calledWith, /\/plugin\/provider\.js 127\.0\.0\.1:1234$/);
  });

  it("refuses an older Node.js, naming the one it found and the one it needs", () => {
    const r = launch("20.11.1");
    assert.equal(r.code, 1);
    assert.equal(r.out, "pulumi-resource-klutch: needs Node.js 24 or later on PATH; found v20.11.1");
    assert.equal(r.calledWith, "");
  });

  it("says so when there is no Node.js on PATH", () => {
    const r = launch(undefined);
    assert.equal(r.code, 1);
    assert.equal(r.out, "pulumi-resource-klutch: Node.js 24 or later must be on PATH; none was found");
  });

  it("passes shellcheck, style warnings included, as the project's scripts do", () => {
    const r = spawnSync("shellcheck", ["-s", "sh", "-S", "style", "-"], {
      input: LAUNCHER,
      encoding: "utf8",
    });
    assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  });
});
