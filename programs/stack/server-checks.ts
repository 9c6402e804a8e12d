import * as fs from "node:fs";
import * as path from "node:path";
import type { EnvironmentConfig } from "../../lib/config/schema";
import { IMPLEMENTATIONS } from "../../network/registry";
import type { ServerCheckAnswers, ServerCheckInput } from "../../network/contract/implementation";
import { existingCrossplaneCheck } from "./existing-crossplane";

/**
 * What only a control plane given by kubeconfig can say, asked before anything is registered:
 * whether it runs a Crossplane this environment did not install (or, with
 * `crossplane.useInstalled`, one it can use: programs/stack/existing-crossplane.ts), and what each
 * implementation in use asks of it (its spec's `pulumi.serverCheck`). A control plane the project
 * makes is known without asking: nothing is asked. Shared by this repository's program and the
 * provider's Environment, so both refuse the same.
 */
export async function serverCheckAnswers(
  config: EnvironmentConfig,
  projectDir: string,
  crossplaneVersion: string,
): Promise<ServerCheckAnswers> {
  const kubeconfig = config.controlPlane.kubeconfig;
  if (!kubeconfig) return { issues: [], notes: [] };
  const used = new Set(config.appClusters.map((a) => a.networkConnector.implementation));
  const checks = [
    (input: ServerCheckInput) => existingCrossplaneCheck(input, crossplaneVersion),
    ...IMPLEMENTATIONS.filter((spec) => used.has(spec.name)).flatMap((spec) => {
      const check = spec.pulumi.serverCheck?.();
      return check ? [check] : [];
    }),
  ];
  const text = fs.readFileSync(path.resolve(projectDir, kubeconfig.path), "utf8");
  const input = { config, kubeconfig: text, ...(kubeconfig.context ? { context: kubeconfig.context } : {}) };
  const answers = await Promise.all(checks.map((check) => check(input)));
  return { issues: answers.flatMap((a) => a.issues), notes: answers.flatMap((a) => a.notes) };
}
