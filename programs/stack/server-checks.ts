import * as fs from "node:fs";
import * as path from "node:path";
import type { EnvironmentConfig } from "../../lib/config/schema";
import { IMPLEMENTATIONS } from "../../network/registry";
import type { ServerCheckAnswers, ServerCheckInput } from "../../network/contract/implementation";
import { existingCrossplaneCheck } from "./existing-crossplane";
import { existingNamespacesCheck } from "./existing-namespaces";
import { existingApisCheck } from "./existing-apis";

/**
 * What only a control plane given by kubeconfig can say, asked before anything is registered:
 * whether it runs a Crossplane this environment did not install (or, with
 * `crossplane.useInstalled`, one it can use: programs/stack/existing-crossplane.ts), and what each
 * implementation in use asks of it (its spec's `pulumi.serverCheck`); and of every cluster
 * handed over by kubeconfig, whether a namespace the environment makes there is someone else's
 * (existing-namespaces.ts), and of the control plane, whether an API it defines there is
 * (existing-apis.ts). A cluster the project makes is known without asking. Shared by this
 * repository's program and the provider's Environment, so both refuse the same, on `preview` as
 * on `up`: a preview asks what it can without writing (ServerCheckInput `preview`), so an
 * operator sees the refusal before the update that would meet it.
 */
export async function serverCheckAnswers(
  config: EnvironmentConfig,
  projectDir: string,
  crossplaneVersion: string,
  preview: boolean,
): Promise<ServerCheckAnswers> {
  const kubeconfig = config.controlPlane.kubeconfig;
  const text = kubeconfig ? fs.readFileSync(path.resolve(projectDir, kubeconfig.path), "utf8") : undefined;
  // Every cluster handed over by kubeconfig: no namespace of the environment's is someone else's.
  const namespaces = existingNamespacesCheck(config, projectDir);
  if (!kubeconfig || text === undefined) return namespaces;
  // Nor any API the environment defines on the control plane.
  const apis = existingApisCheck(config, projectDir);
  const used = new Set(config.appClusters.map((a) => a.networkConnector.implementation));
  const checks = [
    (input: ServerCheckInput) => existingCrossplaneCheck(input, crossplaneVersion),
    ...IMPLEMENTATIONS.filter((spec) => used.has(spec.name)).flatMap((spec) => {
      const check = spec.pulumi.serverCheck?.();
      return check ? [check] : [];
    }),
  ];
  const input = {
    config,
    kubeconfig: text,
    ...(kubeconfig.context ? { context: kubeconfig.context } : {}),
    preview,
  };
  const answers = [...(await Promise.all(checks.map((check) => check(input)))), await namespaces, await apis];
  return { issues: answers.flatMap((a) => a.issues), notes: answers.flatMap((a) => a.notes) };
}
