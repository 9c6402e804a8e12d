import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { repoRoot } from "./toolchain";

/**
 * What to hand `pulumi preview/up --policy-pack` for a Node.js policy pack directory on this
 * toolchain's CLI: an executable that runs the pack.
 *
 * Why not the directory: pulumi 3.276.0 starts a pack directory only through its runtime's
 * language host (pkg/resource/plugin/plugin.go ExecPlugin: `LanguageRuntime("nodejs")` and its
 * `RunPlugin`), and a CLI built from the Go module has no `pulumi-language-nodejs` (the module
 * proxy refuses that module). 3.259.0 fell back to an analyzer plugin `pulumi-analyzer-policy-nodejs`,
 * which the toolchain used to write; 3.276.0 has no such fallback. It still starts a pack given as
 * an executable file itself (pkg/resource/plugin/analyzer_plugin.go NewPolicyAnalyzer), in the
 * program's directory, with the engine's address as the last argument (buildPluginArguments puts
 * the log and tracing flags first), and reads the pack's PulumiPolicy.yaml from the executable's
 * directory when there is one. The stack's config reaches the pack through ConfigureStack, as
 * with a language host.
 *
 * So each pack gets a folder of its own under .pulumi/policy-packs (gitignored), keyed by its
 * absolute path: its PulumiPolicy.yaml and a launcher that runs, in the pack's directory, what the
 * Node.js language host runs for a pack: `@pulumi/pulumi/cmd/run-policy-pack` of the @pulumi/pulumi
 * the pack resolves, with `<engine address> .`.
 */
export function policyPackHost(packDir: string, root: string = repoRoot): string {
  const abs = path.resolve(packDir);
  const policy = path.join(abs, "PulumiPolicy.yaml");
  if (!fs.existsSync(policy)) throw new Error(`${abs} has no PulumiPolicy.yaml: not a policy pack directory`);
  const key = createHash("sha256").update(abs).digest("hex").slice(0, 12);
  const dir = path.join(root, ".pulumi", "policy-packs", `${path.basename(abs)}-${key}`);
  fs.mkdirSync(dir, { recursive: true });
  fs.copyFileSync(policy, path.join(dir, "PulumiPolicy.yaml"));
  const launcher = path.join(dir, "run-policy-pack");
  const text = launcherScript(abs);
  // Written only when it differs, so packs previewed side by side never see a half-written file.
  if (!fs.existsSync(launcher) || fs.readFileSync(launcher, "utf8") !== text) {
    fs.writeFileSync(`${launcher}.${process.pid}`, text, { mode: 0o755 });
    fs.renameSync(`${launcher}.${process.pid}`, launcher);
  }
  return launcher;
}

/** The launcher of the pack in `abs`: POSIX sh, the engine's address being its last argument. */
export function launcherScript(abs: string): string {
  const quoted = `'${abs.replace(/'/g, `'\\''`)}'`;
  return [
    "#!/bin/sh",
    "# Runs a Node.js policy pack for the Pulumi engine (host/automation/policy-host.ts).",
    `cd ${quoted} || exit 1`,
    `script=$(node -e 'process.stdout.write(require.resolve("@pulumi/pulumi/cmd/run-policy-pack"))') || exit 1`,
    "for address; do :; done",
    'exec node "$script" "$address" .',
    "",
  ].join("\n");
}
