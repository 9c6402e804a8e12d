import { strict as assert } from "node:assert";
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { repoRoot } from "../../host/automation/toolchain";

/**
 * The plug-in seam, proved: a copy of this repository gets the `direct` implementation by its
 * folder (test/fixtures/direct-implementation/network/direct/) and one entry in
 * network/registry.ts, nothing else, and in that copy the project type-checks, the layer
 * rules hold, and `direct` goes through validation, the environment, the bridge's program
 * and the network preview (the folder's own tests, run there).
 */

const FIXTURE = path.join(repoRoot, "test", "fixtures", "direct-implementation", "network", "direct");
const REGISTRY = "network/registry.ts";

/** Every file git tracks, as it is in the working tree. */
function trackedFiles(): string[] {
  const out = execFileSync("git", ["ls-files", "-z"], { cwd: repoRoot, encoding: "utf8" });
  return out.split("\0").filter((f) => f && fs.existsSync(path.join(repoRoot, f)));
}

/** The registry with `direct` added: its import, and its name at the end of the list. */
function withDirect(registry: string): string {
  const list = /export const IMPLEMENTATIONS = \[([^\]]*)\] as const;/;
  assert.match(registry, list, "network/registry.ts lists IMPLEMENTATIONS in one line");
  return registry
    .replace(list, (_, names: string) => `export const IMPLEMENTATIONS = [${names}, direct] as const;`)
    .replace(/^(import \{ noop \} .*)$/m, `import { direct } from "./direct/model/spec";\n$1`);
}

function run(copy: string, command: string, args: string[]): void {
  const r = spawnSync(command, args, { cwd: copy, encoding: "utf8", env: process.env, maxBuffer: 64 << 20 });
  assert.equal(r.status, 0, `${command} ${args.join(" ")} in the copy:\n${r.stdout}\n${r.stderr}`);
  // The copy's own test titles, so the report says what was proved there.
  for (const line of r.stdout.split("\n"))
    if (/✔/.test(line)) console.log(`      (in the copy) ${line.trim()}`);
}

describe("the plug-in seam: an implementation is its folder and one registry line (e2e)", function () {
  this.timeout(600_000);
  let copy: string;

  before(() => {
    copy = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-seam-"));
    for (const file of trackedFiles()) {
      fs.mkdirSync(path.dirname(path.join(copy, file)), { recursive: true });
      fs.copyFileSync(path.join(repoRoot, file), path.join(copy, file));
    }
    fs.symlinkSync(path.join(repoRoot, "node_modules"), path.join(copy, "node_modules"));
    fs.cpSync(FIXTURE, path.join(copy, "network", "direct"), { recursive: true });
    const registry = path.join(copy, REGISTRY);
    fs.writeFileSync(registry, withDirect(fs.readFileSync(registry, "utf8")));
  });
  after(() => fs.rmSync(copy, { recursive: true, force: true }));

  it("touches its folder and the registry's import and entry, nothing else", () => {
    const changed = trackedFiles().filter(
      (f) => !fs.readFileSync(path.join(copy, f)).equals(fs.readFileSync(path.join(repoRoot, f))),
    );
    assert.deepEqual(changed, [REGISTRY]);
    const before = fs.readFileSync(path.join(repoRoot, REGISTRY), "utf8").split("\n");
    const after = fs.readFileSync(path.join(copy, REGISTRY), "utf8").split("\n");
    assert.deepEqual(
      after.filter((l) => !before.includes(l)),
      [
        'import { direct } from "./direct/model/spec";',
        "export const IMPLEMENTATIONS = [proxy, wireguard, awsVpcPeering, openstack, noop, direct] as const;",
      ],
    );
  });

  it("the whole project type-checks with it, and its folder keeps the layer rules and the lint", () => {
    const bin = (tool: string) => path.join(repoRoot, "node_modules", ".bin", tool);
    run(copy, bin("tsc"), ["-p", "tsconfig.json", "--noEmit"]);
    run(copy, bin("depcruise"), ["--config", ".dependency-cruiser.cjs", "--output-type", "err", "network"]);
    run(copy, bin("eslint"), ["network/direct", "network/registry.ts"]);
  });

  it("validation and the environment: its schema, its environment part, its bridge settings, its composition (mocks)", () => {
    run(copy, path.join(repoRoot, "node_modules", ".bin", "mocha"), ["network/direct/direct.test.ts"]);
  });

  it("the bridge's program and the network preview run it on the real engine", () => {
    run(copy, path.join(repoRoot, "node_modules", ".bin", "mocha"), ["network/direct/direct-engine.test.ts"]);
  });
});
