import * as path from "node:path";
import { PulumiCommand } from "@pulumi/pulumi/automation";
import { which } from "../../host/local-clusters/host/binaries";

/** The toolchain's `pulumi` on `env`'s PATH (host/automation/toolchain.ts toolchainEnv), by its path. */
export function toolchainPulumi(env: NodeJS.ProcessEnv): string {
  const bin = which("pulumi", env);
  if (!bin)
    throw new Error("pulumi not found on the toolchain's PATH: run `bash host/scripts/toolchain.sh build`");
  return bin;
}

/** That CLI as the Automation API's command (its root is the directory above `bin/`). */
export function toolchainPulumiCommand(env: NodeJS.ProcessEnv): Promise<PulumiCommand> {
  return PulumiCommand.get({ root: path.dirname(path.dirname(toolchainPulumi(env))) });
}
