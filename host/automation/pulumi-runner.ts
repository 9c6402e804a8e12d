import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { which } from "../local-clusters/host/binaries";
import { repoRoot, toolchainEnv } from "./toolchain";

/**
 * Passphrase for the `local` stack's secrets. It protects nothing but throw-away local
 * clusters, and is documented in docs/local-stack.md; every other stack must set its own
 * PULUMI_CONFIG_PASSPHRASE (or a secrets provider).
 */
export const LOCAL_STACK_PASSPHRASE = "klutch-local-only";

/** Where `host/scripts/toolchain.sh env --local-stack` keeps that passphrase for plain `pulumi`. */
export const LOCAL_PASSPHRASE_FILE = path.join(repoRoot, ".pulumi", "local-stack.passphrase");

export const KUBERNETES_PLUGIN_VERSION = (
  JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
  }
).dependencies["@pulumi/kubernetes"] as string;

export interface RunnerOptions {
  stack: string;
  /** Overrides for tests: state and plugin directories, passphrase. */
  env?: NodeJS.ProcessEnv;
}

/**
 * The environment the real Pulumi CLI runs in: the toolchain on PATH, a file backend and
 * plugin home inside the project (gitignored), no update checks and no plugin downloads.
 */
export function pulumiEnv(stack: string, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env = toolchainEnv(base);
  env.PULUMI_BACKEND_URL ??= `file://${path.join(repoRoot, ".pulumi", "state")}`;
  env.PULUMI_HOME ??= path.join(repoRoot, ".pulumi", "home");
  env.PULUMI_SKIP_UPDATE_CHECK = "true";
  // The dynamic provider host resolves @pulumi/pulumi from the workspace directory; a
  // workspace outside the project (the bridge's state dir) finds it through NODE_PATH.
  env.NODE_PATH = [path.join(repoRoot, "node_modules"), env.NODE_PATH].filter(Boolean).join(path.delimiter);
  env.PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION = "true";
  // Use the plugin installed in PULUMI_HOME at the version the program asks for, not
  // whatever binary of that name happens to be on PATH.
  env.PULUMI_IGNORE_AMBIENT_PLUGINS = "true";
  // `host/scripts/toolchain.sh env --local-stack` exports the local stack's passphrase as this file;
  // it must never encrypt another stack's secrets.
  if (
    stack !== "local" &&
    env.PULUMI_CONFIG_PASSPHRASE_FILE &&
    path.resolve(env.PULUMI_CONFIG_PASSPHRASE_FILE) === LOCAL_PASSPHRASE_FILE
  ) {
    throw new Error(
      `stack "${stack}" would use the local stack's passphrase (PULUMI_CONFIG_PASSPHRASE_FILE=${LOCAL_PASSPHRASE_FILE}, from \`host/scripts/toolchain.sh env --local-stack\`); set PULUMI_CONFIG_PASSPHRASE or PULUMI_CONFIG_PASSPHRASE_FILE for this stack`,
    );
  }
  if (!env.PULUMI_CONFIG_PASSPHRASE && !env.PULUMI_CONFIG_PASSPHRASE_FILE) {
    if (stack !== "local") {
      throw new Error(
        `stack "${stack}" needs PULUMI_CONFIG_PASSPHRASE (or PULUMI_CONFIG_PASSPHRASE_FILE) to encrypt its secrets`,
      );
    }
    env.PULUMI_CONFIG_PASSPHRASE = LOCAL_STACK_PASSPHRASE;
  }
  return env;
}

/**
 * Pulumi's automatic log, which the CLI starts for every command since v3.2xx (pulumi/pulumi
 * pkg/cmd/pulumi/pulumi.go, `backendlogging.StartLogging`): every verbose record at debug level,
 * whatever `-v` says, gzipped and encrypted into `$PULUMI_HOME/logs` (pkg/logging/encrypted.go),
 * rotated at 7 days or 500 MB (pkg/logging/rotation.go). Measured on the local stack
 * (docs/running-pulumi.md): it took 58% of the engine's CPU in a preview (3.8 s → 1.6 s without
 * it), and its files had grown to 309 MB in this project's PULUMI_HOME. The CLI has no switch for
 * it; when it cannot create that directory it runs without the log ("automatic logging
 * unavailable", pkg/cmd/pulumi/pulumi.go). So a file takes the directory's place.
 */
export const AUTOMATIC_LOG_NOTE =
  "Pulumi's automatic log is off for this PULUMI_HOME: this file stands where its logs directory would (host/automation/pulumi-runner.ts). Set KLUTCH_PULUMI_LOGS=keep to have it back.\n";

/**
 * Makes PULUMI_HOME and turns Pulumi's automatic log off in it (see AUTOMATIC_LOG_NOTE), unless
 * KLUTCH_PULUMI_LOGS=keep: the engine's own diagnostics stay what `-v` asks for. Best effort: a
 * home that cannot be written keeps whatever Pulumi does there. Any other value of
 * KLUTCH_PULUMI_LOGS than keep or off (or empty) is refused: a typo must not quietly mean off.
 */
export function preparePulumiHome(env: NodeJS.ProcessEnv): void {
  const setting = env.KLUTCH_PULUMI_LOGS;
  if (setting !== undefined && !["", "keep", "off"].includes(setting)) {
    throw new Error(
      `KLUTCH_PULUMI_LOGS=${JSON.stringify(setting)} is not a setting: set it to "keep" to keep Pulumi's automatic log, or to "off" (or leave it unset) to turn it off`,
    );
  }
  const home = env.PULUMI_HOME;
  if (!home) return;
  const logs = path.join(home, "logs");
  try {
    fs.mkdirSync(home, { recursive: true });
    if (env.KLUTCH_PULUMI_LOGS === "keep") {
      if (fs.lstatSync(logs, { throwIfNoEntry: false })?.isFile()) fs.rmSync(logs);
      return;
    }
    const st = fs.lstatSync(logs, { throwIfNoEntry: false });
    if (st?.isFile()) return;
    if (st) fs.rmSync(logs, { recursive: true, force: true });
    fs.writeFileSync(logs, AUTOMATIC_LOG_NOTE);
  } catch {
    // Read-only or shared with another writer: Pulumi keeps its log there.
  }
}

/** Installs the toolchain's pulumi-resource-kubernetes into PULUMI_HOME, once. */
export function ensureKubernetesPlugin(env: NodeJS.ProcessEnv): void {
  const home = env.PULUMI_HOME as string;
  const installed = path.join(
    home,
    "plugins",
    `resource-kubernetes-v${KUBERNETES_PLUGIN_VERSION}`,
    "pulumi-resource-kubernetes",
  );
  if (fs.existsSync(installed)) return;
  const binary = which("pulumi-resource-kubernetes", env);
  if (!binary)
    throw new Error("pulumi-resource-kubernetes not found: run `bash host/scripts/toolchain.sh build`");
  execFileSync(
    "pulumi",
    ["plugin", "install", "resource", "kubernetes", KUBERNETES_PLUGIN_VERSION, "--file", binary],
    {
      env,
      stdio: ["ignore", "inherit", "inherit"],
    },
  );
}
