import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parse, parseAllDocuments, stringify } from "yaml";
import { toolchainEnv } from "../../host/automation/toolchain";

/**
 * The `crossplane` CLI (cmd/crank of github.com/crossplane/crossplane at the toolchain's
 * pinned version), built by `host/scripts/toolchain.sh` as `crank` and exported as
 * KLUTCH_CROSSPLANE_CLI so it does not shadow the core binary, which is also named `crossplane`.
 */
export function crossplaneCli(): string {
  const cli = toolchainEnv().KLUTCH_CROSSPLANE_CLI;
  if (!cli || !fs.existsSync(cli)) {
    throw new Error(
      `the crossplane CLI is not built (${cli ?? "unset"}): run \`bash host/scripts/toolchain.sh build\``,
    );
  }
  return cli;
}

export interface CliResult {
  status: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI with some objects written as YAML files first; `files` maps a name to its documents. */
export function runCli(args: (dir: string) => string[], files: Record<string, object[]> = {}): CliResult {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-crank-"));
  try {
    for (const [name, docs] of Object.entries(files)) {
      fs.writeFileSync(path.join(dir, name), docs.map((d) => stringify(d)).join("---\n"));
    }
    const r = spawnSync(crossplaneCli(), args(dir), { encoding: "utf8", timeout: 60_000 });
    return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `crossplane beta convert pipeline-composition`: upstream's migration of a Resources-mode
 * (patch-and-transform) Composition to a Pipeline with one function-patch-and-transform step
 * (cmd/crank/beta/convert/pipelinecomposition/converter.go at v1.20.11).
 */
export function convertToPipeline(composition: object): Record<string, unknown> {
  const r = runCli((dir) => ["beta", "convert", "pipeline-composition", path.join(dir, "in.yaml")], {
    "in.yaml": [composition],
  });
  if (r.status !== 0) throw new Error(`crossplane beta convert failed (${r.status}): ${r.stderr}`);
  return parse(r.stdout) as Record<string, unknown>;
}

/** `crossplane render <xr> <composition> <functions>`; the documents it prints, parsed. */
export function render(
  xr: object,
  composition: object,
  functions: object[],
): CliResult & { docs: unknown[] } {
  const r = runCli(
    (dir) => ["render", ...["xr", "composition", "functions"].map((f) => path.join(dir, `${f}.yaml`))],
    { "xr.yaml": [xr], "composition.yaml": [composition], "functions.yaml": functions },
  );
  const docs = r.status === 0 ? parseAllDocuments(r.stdout).map((d) => d.toJS() as unknown) : [];
  return { ...r, docs };
}
