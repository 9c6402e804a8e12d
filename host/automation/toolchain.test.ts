import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { defaultCrossplaneVersion } from "../../lib/config/crossplane-versions";
import { crossplane } from "../../lib/config/schema";
import { assertProjectNode, projectNodeMajor, repoRoot, toolchainEnv } from "./toolchain";

const versions = fs.readFileSync(path.join(repoRoot, "host", "toolchain", "versions.env"), "utf8");
const pinned = (name: string) => new RegExp(`^${name}=(.+)$`, "m").exec(versions)?.[1];
const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8")) as {
  engines: { node: string };
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};

describe("the project's runtime (Node.js and Pulumi versions)", () => {
  it("clusters get by default the Crossplane cores the toolchain builds and the tests run", () => {
    // v2 wherever core runs as the chart's pods; 1.20 for a core run as a process. 1.20.4+ starts a
    // claim controller's watch of its XRs again after a failed first try (crossplane/crossplane
    // aa1e8bc55, #6884); 1.20.1 ran on without it and left claims unready.
    assert.equal(crossplane.parse({}).version, undefined);
    assert.equal(defaultCrossplaneVersion(false), pinned("CROSSPLANE_VERSION"));
    assert.equal(defaultCrossplaneVersion(true), pinned("CROSSPLANE_LEGACY_VERSION"));
  });

  it("the tests themselves run on the pinned Node.js line (npm test goes through host/scripts/node.sh)", () => {
    assert.equal(Number(process.versions.node.split(".")[0]), projectNodeMajor());
    assert.equal(pkg.engines.node, `>=${projectNodeMajor()}`);
  });

  it("refuses another Node.js line before driving the engine, saying how to start it", () => {
    assert.throws(
      () => assertProjectNode("20.20.2"),
      /runs on Node\.js 20\.20\.2, but the project runs on Node\.js 26 .*host\/scripts\/node\.sh/,
    );
    assert.doesNotThrow(() => assertProjectNode(`${projectNodeMajor()}.0.0`));
  });

  it("the engine's Node.js hosts run on this process's Node.js: its directory comes first on PATH", () => {
    const env = toolchainEnv({ ...process.env, PATH: "/usr/bin:/bin" });
    const dirs = (env.PATH ?? "").split(path.delimiter);
    assert.ok(dirs.includes(path.dirname(process.execPath)));
    assert.ok(
      dirs.indexOf(path.dirname(process.execPath)) < dirs.indexOf("/usr/bin"),
      `${path.dirname(process.execPath)} before /usr/bin in ${env.PATH}`,
    );
  });

  it("the SDK and the engine move together: @pulumi/pulumi equals the toolchain's Pulumi CLI", () => {
    assert.equal(pkg.dependencies["@pulumi/pulumi"], pinned("PULUMI_VERSION"));
    assert.equal(
      pkg.devDependencies["ts-node"],
      undefined,
      "TypeScript runs through host/scripts/register-typescript.cjs",
    );
    assert.ok(pkg.devDependencies.esbuild, "the loader transpiles with esbuild");
  });

  it("host/scripts/node.sh runs a command with the pinned Node.js first on PATH, whatever the machine's node is", () => {
    // A PATH whose only node is a fake of another line: node.sh must not use it.
    const fake = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-node-"));
    try {
      fs.writeFileSync(path.join(fake, "node"), "#!/bin/sh\necho v20.20.2\n", { mode: 0o755 });
      const out = execFileSync(
        "bash",
        [path.join(repoRoot, "host", "scripts", "node.sh"), "node", "-p", "process.version"],
        {
          encoding: "utf8",
          env: { ...process.env, PATH: `${fake}:${process.env.PATH ?? ""}` },
        },
      );
      assert.equal(out.trim(), `v${pinned("NODE_VERSION")}`);
    } finally {
      fs.rmSync(fake, { recursive: true, force: true });
    }
  });
});
