import * as fs from "node:fs";
import * as path from "node:path";
import { LocalWorkspace, type PulumiFn, type Stack, type UpResult } from "@pulumi/pulumi/automation";
import { ensureKubernetesPlugin, preparePulumiHome, pulumiEnv } from "../../host/automation/pulumi-runner";

/**
 * An inline Pulumi program's stack for a test or a benchmark: its state in `<workDir>/<stateDir>`
 * (a file backend), the toolchain's CLI and kubernetes plugin, and `projectName` as the project
 * and the environment's name.
 */
export async function inlineStack(opts: {
  projectName: string;
  stackName: string;
  workDir: string;
  passphrase: string;
  program: PulumiFn;
  /** Under workDir; default "state". */
  stateDir?: string;
}): Promise<Stack> {
  const state = path.join(opts.workDir, opts.stateDir ?? "state");
  const stackEnv = pulumiEnv(opts.projectName, {
    ...process.env,
    PULUMI_BACKEND_URL: `file://${state}`,
    PULUMI_CONFIG_PASSPHRASE: opts.passphrase,
  });
  fs.mkdirSync(state, { recursive: true });
  preparePulumiHome(stackEnv);
  ensureKubernetesPlugin(stackEnv);
  // The Automation API finds the CLI on this process's PATH, not on envVars'.
  process.env.PATH = stackEnv.PATH;
  const envVars = Object.fromEntries(
    Object.entries(stackEnv).filter((e): e is [string, string] => typeof e[1] === "string"),
  );
  // The engine's temporary files (a kubeconfig per Kubernetes provider, which the provider
  // never removes: host/automation/engine-tmp.ts) go with the test's work directory.
  envVars.TMPDIR = path.join(opts.workDir, "engine-tmp");
  fs.mkdirSync(envVars.TMPDIR, { recursive: true });
  return LocalWorkspace.createOrSelectStack(
    { projectName: opts.projectName, stackName: opts.stackName, program: opts.program },
    { envVars, workDir: opts.workDir },
  );
}

/** `up`, failing with the engine's last 30 lines (and `context`, when given) in the message. */
export async function upOrExplain(stack: Stack, context: () => string = () => ""): Promise<UpResult> {
  const lines: string[] = [];
  return stack.up({ onOutput: (l) => lines.push(l) }).catch((e: Error) => {
    const more = context();
    throw new Error(`${e.message}\n${lines.slice(-30).join("")}${more ? `\n${more}` : ""}`);
  });
}
