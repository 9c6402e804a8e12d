import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  LAUNCHER,
  PLATFORMS,
  WINDOWS_LAUNCHER,
  WINDOWS_NODE_CHECK,
  pluginArchiveName,
  pluginArchives,
} from "./plugin-archives";
import { entriesOf } from "./tar-gz";

/**
 * The release archive's launcher (programs/release/plugin-archives.ts), run by /bin/sh as the engine runs a plugin,
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

describe("the release's plugin launcher (programs/release/plugin-archives.ts)", () => {
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

/** The Windows launcher's version check run by this machine's node with `process.versions.node` set to `version`. */
function windowsCheck(version: string): { code: number | null; out: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-launcher-"));
  const preload = path.join(dir, "version.js");
  fs.writeFileSync(
    preload,
    [
      `Object.defineProperty(process.versions, "node", { value: ${JSON.stringify(version)} });`,
      `Object.defineProperty(process, "version", { value: ${JSON.stringify(`v${version}`)} });`,
    ].join("\n"),
  );
  const r = spawnSync(process.execPath, ["--require", preload, "-e", WINDOWS_NODE_CHECK], {
    encoding: "utf8",
  });
  fs.rmSync(dir, { recursive: true, force: true });
  return { code: r.status, out: `${r.stdout}${r.stderr}`.trim() };
}

describe("the release's plugin archives, one per platform (programs/release/plugin-archives.ts)", () => {
  const mtime = new Date(Date.UTC(2026, 0, 2));
  const bundle = Buffer.from("// the bundled provider\n");

  it("names every platform the engine asks a plugin server for, byte-identical on a second build", async () => {
    const first = await pluginArchives(bundle, "1.2.3", mtime);
    const second = await pluginArchives(bundle, "1.2.3", mtime);
    assert.deepEqual(
      [...first.keys()],
      [
        "pulumi-resource-klutch-v1.2.3-linux-amd64.tar.gz",
        "pulumi-resource-klutch-v1.2.3-linux-arm64.tar.gz",
        "pulumi-resource-klutch-v1.2.3-darwin-amd64.tar.gz",
        "pulumi-resource-klutch-v1.2.3-darwin-arm64.tar.gz",
        "pulumi-resource-klutch-v1.2.3-windows-amd64.tar.gz",
      ],
    );
    for (const [name, bytes] of first) assert.ok(bytes.equals(second.get(name)!), `${name} differs`);
  });

  it("holds the bundle and the launcher its platform runs: sh on Linux and macOS, cmd.exe on Windows", async () => {
    const archives = await pluginArchives(bundle, "1.2.3", mtime);
    for (const platform of PLATFORMS) {
      const entries = await entriesOf(archives.get(pluginArchiveName("1.2.3", platform))!);
      const [provider, launcher] = entries;
      assert.equal(entries.length, 2);
      assert.equal(provider!.name, "provider.js");
      assert.ok(provider!.body.equals(bundle));
      assert.equal(launcher!.mode, 0o755);
      if (platform.startsWith("windows-")) {
        assert.equal(launcher!.name, "pulumi-resource-klutch.cmd");
        assert.equal(launcher!.body.toString(), WINDOWS_LAUNCHER);
      } else {
        assert.equal(launcher!.name, "pulumi-resource-klutch");
        assert.equal(launcher!.body.toString(), LAUNCHER);
      }
    }
  });

  it("the Windows launcher: CRLF line ends, the bundle beside it run with the engine's arguments", () => {
    const lines = WINDOWS_LAUNCHER.split("\r\n");
    assert.equal(lines.pop(), "");
    assert.ok(
      lines.every((l) => !l.includes("\n")),
      "a bare LF in the .cmd",
    );
    assert.equal(lines[0], "@echo off");
    assert.equal(lines.at(-1), 'node "%~dp0provider.js" %*');
  });

  it("the Windows launcher's version check: passes on Node.js 24, refuses 20 naming it (run by node, as cmd.exe runs it)", () => {
    assert.deepEqual(windowsCheck("24.21.0"), { code: 0, out: "" });
    assert.deepEqual(windowsCheck("20.11.1"), {
      code: 1,
      out: "pulumi-resource-klutch: needs Node.js 24 or later on PATH; found v20.11.1",
    });
  });
});
