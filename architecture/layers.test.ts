import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { cycleImports, folderCycles, folderGraph, type CruisedModule } from "./folder-graph";

const root = path.resolve(__dirname, "..");

// eslint-disable-next-line @typescript-eslint/no-require-imports
const config = require("../.dependency-cruiser.cjs") as {
  options: Record<string, unknown>;
  forbidden: unknown[];
};

/** Runs dependency-cruiser (an ES module only) in `dir`, which its path rules are relative to. */
async function cruiseIn(dir: string, options: Record<string, unknown>): Promise<unknown> {
  const { cruise } = (await import("dependency-cruiser")) as {
    cruise: (files: string[], options: unknown) => Promise<{ output: unknown }>;
  };
  const cwd = process.cwd();
  process.chdir(dir);
  try {
    return (await cruise(["."], options)).output;
  } finally {
    process.chdir(cwd);
  }
}

/** The project's import graph as dependency-cruiser resolves it (its own config: tsconfig, exclusions). */
async function projectGraph(): Promise<{ modules: CruisedModule[] }> {
  return (await cruiseIn(root, config.options)) as { modules: CruisedModule[] };
}

describe("architecture: folders", function () {
  this.timeout(120_000);

  it("import no folder that imports them back, through any chain", async () => {
    const { modules } = await projectGraph();
    const graph = folderGraph(modules);
    assert.ok(graph.size > 20, `the graph has ${graph.size} folders; the cruise found too little`);
    const cycles = folderCycles(graph);
    assert.deepEqual(
      cycles,
      [],
      `folders in cycles, and the imports that close them:\n${cycleImports(modules, cycles).join("\n")}`,
    );
  });
});

describe("architecture: the layer rules", function () {
  this.timeout(60_000);

  /** Cruises a throw-away tree laid out like the project with the project's rules; the names of the rules broken. */
  /** Cruises a throw-away tree laid out like the project with the project's rules; the names of the rules broken. */
  async function brokenRules(files: Record<string, string>): Promise<string[]> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-layers-"));
    try {
      for (const [file, text] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        fs.writeFileSync(path.join(dir, file), text);
      }
      const output = await cruiseIn(dir, {
        ruleSet: { forbidden: config.forbidden },
        validate: true,
        tsPreCompilationDeps: true,
        enhancedResolveOptions: { extensions: [".ts", ".js"] },
      });
      const summary = (output as { summary: { violations: { rule: { name: string } }[] } }).summary;
      return summary.violations.map((v) => v.rule.name).sort();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  it("refuse an import from a layer above", async () => {
    assert.deepEqual(
      await brokenRules({
        "lib/plan.ts":
          'import { Environment } from "../components/environment";\nexport const x = Environment;\n',
        "components/environment.ts": "export const Environment = 1;\n",
      }),
      ["layer-core"],
    );
  });

  it("refuse the file system, processes and Pulumi in a pure folder, directly or through an impure module", async () => {
    assert.deepEqual(
      await brokenRules({
        "network/proxy/model/planner.ts":
          'import * as fs from "node:fs";\nexport const read = fs.readFileSync;\n',
        "lib/run.ts": 'import { execFile } from "node:child_process";\nexport const run = execFile;\n',
        "config/validate.ts": 'import { start } from "../local-clusters/start";\nexport const s = start;\n',
        "local-clusters/start.ts": "export const start = 1;\n",
      }),
      ["pure-config-imports-pure", "pure-core", "pure-implementation-models"],
    );
  });

  it("let a layer import its own and the layers below it", async () => {
    assert.deepEqual(
      await brokenRules({
        "components/environment.ts":
          'import { plan } from "../lib/plan";\nimport { p } from "../network/proxy/model/planner";\nexport const e = [plan, p];\n',
        "network/proxy/model/planner.ts":
          'import { plan } from "../../../lib/plan";\nexport const p = plan;\n',
        "lib/plan.ts": "export const plan = 1;\n",
      }),
      [],
    );
  });
});
