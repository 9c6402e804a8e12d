import * as fs from "node:fs";
import { LocalWorkspace, type Stack } from "@pulumi/pulumi/automation";
import {
  ensureKubernetesPlugin,
  pulumiEnv,
  type RunnerOptions,
  preparePulumiHome,
} from "../../host/automation/pulumi-runner";
import { which } from "../../host/local-clusters/host/binaries";
import { repoRoot } from "../../host/automation/toolchain";
import { engineTmp } from "../../host/automation/engine-tmp";

/**
 * Selects (or creates) a stack of this project for the real Pulumi CLI. The program runs
 * in this process through the Automation API's language runtime (`pulumi up --client`),
 * so only the engine binary and the provider plugins are needed, not a language host.
 */
export async function selectStack(options: RunnerOptions): Promise<Stack> {
  const env = pulumiEnv(options.stack, { ...process.env, ...options.env });
  if (!which("pulumi", env)) throw new Error("pulumi not found: run `bash host/scripts/toolchain.sh build`");
  fs.mkdirSync((env.PULUMI_BACKEND_URL as string).replace(/^file:\/\//, ""), { recursive: true });
  preparePulumiHome(env);
  ensureKubernetesPlugin(env);
  // The Automation API spawns `pulumi` with process.env plus envVars; PATH must be ours.
  process.env.PATH = env.PATH;
  const envVars = Object.fromEntries(
    Object.entries(env).filter((e): e is [string, string] => typeof e[1] === "string"),
  );
  // The engine's temporary files, removed when this command ends: the Kubernetes provider
  // leaves each cluster's kubeconfig there (host/automation/engine-tmp.ts).
  const tmp = engineTmp();
  process.once("exit", () => tmp.remove());
  envVars.TMPDIR = tmp.dir;
  // The program (every component and cloud SDK, about 1.5 s of imports) is loaded when the
  // engine runs it, so `--help`, config errors and the commands that run no program (`config`,
  // `outputs`) do not pay for it.
  const program = () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { runKlutchProgram } = require("./program") as typeof import("./program");
    return runKlutchProgram();
  };
  return LocalWorkspace.createOrSelectStack(
    { stackName: options.stack, projectName: "klutch", program },
    { workDir: repoRoot, envVars },
  );
}
