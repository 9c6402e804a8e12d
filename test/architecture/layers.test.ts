import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { cycleImports, folderCycles, folderGraph, type CruisedModule } from "./folder-graph";

const root = path.resolve(__dirname, "..", "..");

// eslint-disable-next-line @typescript-eslint/no-require-imports
const config = require("../../.dependency-cruiser.cjs") as {
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

  // One import up from each band to the band above it: the tree's order is the rules' order.
  const upward: [string, string, string][] = [
    ["host/automation/run.ts", "../../providers/dynamic/key", "layer-host"],
    ["providers/dynamic/key.ts", "../../clusters/local-cluster", "layer-providers"],
    ["clusters/local-cluster.ts", "../network/contract/names", "layer-clusters"],
    ["network/plugins/environments.ts", "../../components/config/schema", "layer-connector-assembly"],
    ["components/environment.ts", "../programs/stack/program", "layer-components"],
    ["programs/stack/program.ts", "../../test/helpers/kubectl", "layer-programs"],
  ];
  for (const [from, spec, rule] of upward) {
    it(`refuse ${from.split("/")[0]}/ importing the band above it (${rule})`, async () => {
      const target = path.posix.join(path.posix.dirname(from), `${spec}.ts`);
      assert.deepEqual(
        await brokenRules({
          [from]: `import { t } from "${spec}";\nexport const x = t;\n`,
          [target]: "export const t = 1;\n",
        }),
        [rule],
      );
    });
  }

  it("refuse an import up between a band's inner layers", async () => {
    assert.deepEqual(
      await brokenRules({
        // components/config/ (inner, pure) under the components themselves
        "components/config/schema.ts": 'import { e } from "../environment";\nexport const s = e;\n',
        "components/environment.ts": "export const e = 1;\n",
        // network/contract/ under an implementation
        "network/contract/implementation.ts":
          'import { p } from "../proxy/model/planner";\nexport const c = p;\n',
        "network/proxy/model/planner.ts": "export const p = 1;\n",
        // the preview's pure planning under the program that runs it
        "programs/network-preview/plan/assemble.ts": 'import { m } from "../main";\nexport const a = m;\n',
        "programs/network-preview/main.ts": "export const m = 1;\n",
      }),
      ["layer-config", "layer-connector-contract", "layer-preview-model"],
    );
  });

  it("refuse a network implementation importing another's folder", async () => {
    assert.deepEqual(
      await brokenRules({
        "network/wireguard/openstack-gateway.ts":
          'import { g } from "../openstack/security-group";\nexport const w = g;\n',
        "network/openstack/security-group.ts": "export const g = 1;\n",
        // what they share, from network/shared/, is theirs to import
        "network/openstack/routed-path.ts":
          'import { s } from "../shared/security-group";\nexport const r = s;\n',
        "network/shared/security-group.ts": "export const s = 1;\n",
      }),
      ["implementations-apart"],
    );
  });

  it("refuse a program reaching into an implementation's folder, but not through the registry or in its tests", async () => {
    assert.deepEqual(
      await brokenRules({
        "programs/bridge/stack-runner.ts":
          'import { listenerKeys } from "../../network/proxy/model/types";\nimport { r } from "../../network/registry";\nexport const s = [listenerKeys, r];\n',
        "network/proxy/model/types.ts": "export const listenerKeys = 1;\n",
        "network/registry.ts": "export const r = 1;\n",
        // a test of the bridge may name the implementation it drives
        "programs/bridge/faults.test.ts":
          'import { listenerKeys } from "../../network/proxy/model/types";\nexport const t = listenerKeys;\n',
      }),
      ["programs-through-specs"],
    );
  });

  it("refuse the file system, processes and Pulumi in a pure folder, directly or through an impure module", async () => {
    assert.deepEqual(
      await brokenRules({
        "network/proxy/model/planner.ts":
          'import * as fs from "node:fs";\nexport const read = fs.readFileSync;\n',
        "lib/run.ts": 'import { execFile } from "node:child_process";\nexport const run = execFile;\n',
        "components/config/validate.ts":
          'import { start } from "../../host/local-clusters/start";\nexport const s = start;\n',
        "host/local-clusters/start.ts": "export const start = 1;\n",
      }),
      ["pure-config-imports-pure", "pure-core", "pure-implementation-models"],
    );
  });

  it("let a layer import its own and the layers below it", async () => {
    assert.deepEqual(
      await brokenRules({
        "programs/stack/program.ts":
          'import { e } from "../../components/environment";\nimport { k } from "../../providers/kit/props";\nexport const s = [e, k];\n',
        "components/environment.ts":
          'import { plan } from "../lib/plan";\nimport { p } from "../network/proxy/model/planner";\nimport { c } from "../clusters/local-cluster";\nexport const e = [plan, p, c];\n',
        "clusters/local-cluster.ts":
          'import { h } from "../host/automation/toolchain";\nexport const c = h;\n',
        "providers/kit/props.ts": 'import { plan } from "../../lib/plan";\nexport const k = plan;\n',
        "host/automation/toolchain.ts": "export const h = 1;\n",
        "network/proxy/model/planner.ts":
          'import { plan } from "../../../lib/plan";\nexport const p = plan;\n',
        "lib/plan.ts": "export const plan = 1;\n",
      }),
      [],
    );
  });

  it("put each top-level folder in one band, the bands in the table's order", () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { LAYERS } = require("./layers.cjs") as { LAYERS: { band: string; paths: string[] }[] };
    const order = LAYERS.map((l) => l.band).filter((b, i, all) => all.indexOf(b) === i);
    for (const layer of LAYERS)
      for (const p of layer.paths)
        if (p !== "^[^/]+$") assert.ok(p.startsWith(`^${layer.band}/`), `${p} is not inside ${layer.band}/`);
    // Each band's layers stand together: a band never comes back after another began.
    assert.deepEqual(
      LAYERS.map((l) => l.band).filter((b, i, all) => i === 0 || all[i - 1] !== b),
      order,
    );
    const folders = fs
      .readdirSync(root, { withFileTypes: true })
      .filter(
        (d) => d.isDirectory() && !d.name.startsWith(".") && d.name !== "node_modules" && d.name !== "bin",
      )
      .map((d) => d.name)
      .sort();
    // Folders of no code of the project's own: the generated SDKs, the stacks, the docs and the
    // examples (programs on the published SDKs, compiled and run by the e2e, not by the build).
    const codeless = ["docs", "examples", "sdk", "stacks"];
    assert.deepEqual(folders, [...order, ...codeless].sort());
    assert.ok(folders.length <= 12, `${folders.length} top-level folders: ${folders.join(", ")}`);
    const rootTs = fs.readdirSync(root).filter((f) => f.endsWith(".ts"));
    assert.deepEqual(rootTs, ["index.ts"]);
  });
});
