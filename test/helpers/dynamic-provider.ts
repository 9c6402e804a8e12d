import { strict as assert } from "node:assert";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { repoRoot } from "../../host/automation/toolchain";

/**
 * Runs a provider the way Pulumi does: serialize its closure, then load the text in a
 * separate plain `node` process (no ts-node, another cwd) and call `script` on it. Libraries
 * come from the project's node_modules on NODE_PATH, as the engine's dynamic-provider host
 * gives them (host/automation/pulumi-runner.ts).
 */
export async function runSerialized(provider: object, script: string): Promise<unknown> {
  const serialized = await pulumi.runtime.serializeFunction(() => provider, { allowSecrets: true });
  assert.doesNotMatch(
    serialized.text,
    /require\("\.{1,2}\//,
    "the provider must not require project files at run time",
  );
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "dynprov-"));
  try {
    fs.writeFileSync(path.join(dir, "provider.js"), serialized.text);
    const driver = `
      const provider = require("./provider.js").handler();
      (async () => { const out = await (${script})(provider); process.stdout.write(JSON.stringify(out)); })()
        .catch((e) => { process.stdout.write(JSON.stringify({ error: e.message })); });`;
    // Asynchronous, so a test's loopback server in this process can answer the provider.
    const { stdout } = await promisify(execFile)(process.execPath, ["-e", driver], {
      cwd: dir,
      encoding: "utf8",
      timeout: 15000,
      env: { PATH: process.env.PATH, NODE_PATH: path.join(repoRoot, "node_modules") },
    });
    return JSON.parse(stdout) as unknown;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
