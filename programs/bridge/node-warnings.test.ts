import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import { builtinModules } from "node:module";
import * as path from "node:path";
import { NODE_TYPESCRIPT_ARGS } from "../../host/automation/toolchain";

/** A Node.js process that routes its warnings with logNodeWarnings, then runs `body`. */
function run(body: string): { stdout: string; stderr: string } {
  const script = [
    `const { logNodeWarnings } = require(${JSON.stringify(path.join(__dirname, "node-warnings.ts"))});`,
    `const { jsonLogger } = require(${JSON.stringify(path.join(__dirname, "log.ts"))});`,
    `logNodeWarnings(jsonLogger("debug"));`,
    body,
  ].join("\n");
  const r = spawnSync(process.execPath, [...NODE_TYPESCRIPT_ARGS, "-e", script], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  return { stdout: r.stdout, stderr: r.stderr };
}

const lines = (stdout: string) =>
  stdout
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe("logNodeWarnings: Node.js warnings in the bridge's JSON log", () => {
  it("logs a warning as one JSON line, once, and nothing on stderr", () => {
    const { stdout, stderr } = run(
      'process.emitWarning("old API", "DeprecationWarning", "DEP9999"); process.emitWarning("old API", "DeprecationWarning", "DEP9999");',
    );
    assert.equal(stderr, "");
    assert.deepEqual(
      lines(stdout).map(({ level, msg, name, warning, code }) => ({ level, msg, name, warning, code })),
      [
        {
          level: "warn",
          msg: "Node.js warning",
          name: "DeprecationWarning",
          warning: "old API",
          code: "DEP9999",
        },
      ],
    );
  });

  it("the warning loading node:ffi gives, as Pulumi's closure serializer loads every builtin, at debug", function () {
    if (!builtinModules.includes("node:ffi")) this.skip(); // Node.js before 26
    const { stdout, stderr } = run('require("node:ffi");');
    assert.equal(stderr, "");
    assert.deepEqual(
      lines(stdout).map(({ level, name }) => ({ level, name })),
      [{ level: "debug", name: "ExperimentalWarning" }],
    );
  });
});
