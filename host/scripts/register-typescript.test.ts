import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { repoRoot } from "../automation/toolchain";

/** Writes `files` into a new folder and runs `main` there through the loader, as host/scripts/node.sh ts does. */
function runTypeScript(files: Record<string, string>, main: string, at?: { dir: string; cache: string }) {
  const dir = at?.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), "klutch-ts-loader-"));
  try {
    for (const [name, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      fs.writeFileSync(path.join(dir, name), text);
    }
    const r = spawnSync(
      "bash",
      [path.join(repoRoot, "host", "scripts", "node.sh"), "ts", path.join(dir, main)],
      {
        encoding: "utf8",
        // The folder is outside the repository: its requires of packages find them here.
        env: {
          ...process.env,
          NODE_PATH: path.join(repoRoot, "node_modules"),
          ...(at ? { KLUTCH_TYPESCRIPT_CACHE: at.cache } : {}),
        },
      },
    );
    return { status: r.status, out: r.stdout, err: r.stderr };
  } finally {
    if (!at) fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe("the project's TypeScript loader (host/scripts/register-typescript.cjs)", () => {
  it("runs TypeScript that requires its siblings as TypeScript resolves them: extensionless, a folder's index, a .js name", () => {
    const r = runTypeScript(
      {
        "main.ts": [
          'import { a } from "./a";',
          'import { b } from "./lib";',
          'import { c } from "./c.js";',
          "const sum: number = a + b + c;",
          "console.log(sum);",
        ].join("\n"),
        "a.ts": "export const a: number = 1;",
        "lib/index.ts": "export const b: number = 2;",
        "c.ts": "export const c = 3 as number;",
      },
      "main.ts",
    );
    assert.equal(r.status, 0, r.err);
    assert.equal(r.out.trim(), "6");
  });

  it("runs each file as strict code, as a module is", () => {
    const r = runTypeScript(
      { "main.ts": "export function self(this: unknown) {\n  return this;\n}\nconsole.log(String(self()));" },
      "main.ts",
    );
    assert.equal(r.status, 0, r.err);
    assert.equal(r.out.trim(), "undefined");
  });

  it("names the .ts file and line in a stack trace", () => {
    const r = runTypeScript(
      { "main.ts": ["interface Shape {", "  side: number;", "}", 'throw new Error("line 4");'].join("\n") },
      "main.ts",
    );
    assert.notEqual(r.status, 0);
    assert.match(r.err, /main\.ts:4\b/);
  });

  it("leaves node_modules to Node.js: an ES module package loads through require(), untranspiled", () => {
    const r = runTypeScript(
      {
        "main.ts": [
          'import * as k8s from "@kubernetes/client-node";',
          "console.log(typeof new k8s.KubeConfig().loadFromString, Object.prototype.toString.call(require('@kubernetes/client-node')));",
        ].join("\n"),
      },
      "main.ts",
    );
    assert.equal(r.status, 0, r.err);
    // Node.js loaded it as the ES module it is (a module namespace); transpiled to CommonJS, it
    // would be a plain exports object.
    assert.equal(r.out.trim(), "function [object Module]");
  });

  it("keeps each file's JavaScript by its text: a second run reads it back, a changed file is transpiled again", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-ts-cache-"));
    const at = { dir: path.join(root, "src"), cache: path.join(root, "cache") };
    try {
      const first = runTypeScript(
        { "main.ts": 'const n: number = 1;\nconsole.log("transpiled", n);' },
        "main.ts",
        at,
      );
      assert.equal(first.out.trim(), "transpiled 1", first.err);
      // The one entry, overwritten: the next run of the same file must run what the cache holds.
      const entries = fs
        .readdirSync(at.cache, { recursive: true, encoding: "utf8" })
        .filter((f) => f.endsWith(".js"));
      assert.equal(entries.length, 1);
      fs.writeFileSync(path.join(at.cache, entries[0]!), 'console.log("from the cache");');
      const second = runTypeScript(
        { "main.ts": 'const n: number = 1;\nconsole.log("transpiled", n);' },
        "main.ts",
        at,
      );
      assert.equal(second.out.trim(), "from the cache", second.err);
      const changed = runTypeScript(
        { "main.ts": 'const n: number = 2;\nconsole.log("transpiled", n);' },
        "main.ts",
        at,
      );
      assert.equal(changed.out.trim(), "transpiled 2", changed.err);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
