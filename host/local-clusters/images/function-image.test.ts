import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { repoRoot } from "../../automation/toolchain";
import { FUNCTION_ENTRY, functionApp, functionImageSpec } from "./function-image";

describe("klutch.local/function-klutch: the composition function's image", () => {
  const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-function-image-"));
  after(() => fs.rmSync(cacheDir, { recursive: true, force: true }));

  it("runs the files functionApp makes, the render test's server among them: each module, its package.json, its entry point", () => {
    const { app, main, modules } = functionApp(repoRoot, cacheDir);
    const spec = functionImageSpec(repoRoot, cacheDir, "klutch.local/function-klutch");
    const sources = new Map(
      spec.entries.flatMap((e) => (e.type === "file" && e.source ? [[e.path, e.source] as const] : [])),
    );
    assert.equal(
      sources.get("/app/programs/composition-function/package.json"),
      path.join(app, "programs", "composition-function", "package.json"),
    );
    for (const m of modules) {
      const js = m.replace(/\.ts$/, ".js");
      assert.equal(sources.get(`/app/${js}`), path.join(app, js), m);
    }
    assert.equal(main, path.join(app, FUNCTION_ENTRY.replace(/\.ts$/, ".js")));
    assert.deepEqual(spec.config.Entrypoint, ["/usr/local/bin/node", `/app/${path.relative(app, main)}`]);
    // The folder's package.json is the function's own: it makes its .js files ES modules.
    assert.equal(
      fs.readFileSync(path.join(app, "programs", "composition-function", "package.json"), "utf8"),
      fs.readFileSync(path.join(repoRoot, "programs", "composition-function", "package.json"), "utf8"),
    );
    assert.match(fs.readFileSync(main, "utf8"), /^import /m, "an ES module");
  });

  it("a second call finds the same folder and leaves its package.json in place", () => {
    const first = functionApp(repoRoot, cacheDir);
    const file = path.join(first.app, "programs", "composition-function", "package.json");
    const before = fs.statSync(file).mtimeMs;
    const second = functionApp(repoRoot, cacheDir);
    assert.equal(second.app, first.app);
    assert.equal(fs.statSync(file).mtimeMs, before);
    assert.deepEqual(
      fs.readdirSync(path.dirname(file)).filter((f) => f.includes(".tmp-")),
      [],
      "no temporary file left behind",
    );
  });
});
