import * as pulumi from "@pulumi/pulumi";
import { KlutchEnvironment, type ApiDelivery } from "../../components/environment";
import { loadEnvironment, type LoadedEnvironment } from "./stack-config";
import { serverCheckAnswers } from "./server-checks";
import { renderIssues } from "../../lib/config/messages";
import { unsupportedInfrastructure } from "../../lib/environment-plan";
import { crossplaneSource, type CrossplaneSource } from "../../host/automation/crossplane-source";
import { toolchainCrossplaneClusterDirs } from "../../host/automation/toolchain";

function apiDeliveryFromEnv(value: string | undefined): { apiDelivery?: ApiDelivery } {
  if (value === undefined || value === "") return {};
  if (value === "loose" || value === "adopting" || value === "packaged") return { apiDelivery: value };
  throw new pulumi.RunError(
    `KLUTCH_API_DELIVERY is "${value}"; it takes loose, adopting or packaged, or unset`,
  );
}

/**
 * The Pulumi program: validate the whole stack config first, then register the
 * environment. Any problem stops it before a single resource is registered.
 */
export function klutchProgram(loaded: LoadedEnvironment = loadEnvironment()): Record<string, unknown> {
  return registerEnvironment(loaded, checkedSource(loaded));
}

/**
 * The program as the engine runs it: klutchProgram, with the existing clusters' own API servers
 * asked first, where only they know what they take (server-checks.ts); a refusal stops the run
 * before anything is registered. A preview asks too, but nothing that writes.
 */
export async function runKlutchProgram(): Promise<Record<string, unknown>> {
  const loaded = loadEnvironment();
  const source = checkedSource(loaded);
  await refuseWhatServersRefuse(loaded);
  return registerEnvironment(loaded, source);
}

/** What the control plane's API server refuses stops the run; what could not be asked is said. */
async function refuseWhatServersRefuse({ config, projectDir, crossplane }: LoadedEnvironment): Promise<void> {
  const answers = await serverCheckAnswers(config, projectDir, crossplane.version, pulumi.runtime.isDryRun());
  for (const note of answers.notes) void pulumi.log.warn(note);
  if (answers.issues.length > 0) throw new pulumi.RunError(renderIssues(answers.issues, pulumi.getStack()));
}

function checkedSource({ config, projectDir, crossplane }: LoadedEnvironment): CrossplaneSource {
  const unsupported = unsupportedInfrastructure(config);
  if (unsupported.length > 0) throw new pulumi.RunError(renderIssues(unsupported, pulumi.getStack()));
  const source = crossplaneSource(config, crossplane, projectDir, () => toolchainCrossplaneClusterDirs());
  if (!source.ok)
    throw new pulumi.RunError(
      renderIssues([{ path: `klutch:${source.setting}`, message: source.message }], pulumi.getStack()),
    );
  return source.source;
}

function registerEnvironment(loaded: LoadedEnvironment, source: CrossplaneSource): Record<string, unknown> {
  const { config, projectDir, secrets, bridge, crossplane, instanceNames } = loaded;
  const env = new KlutchEnvironment(config.environment, {
    config,
    projectDir,
    secrets,
    crossplaneSource: source,
    crossplanePlan: crossplane,
    ...(bridge ? { bridge } : {}),
    instanceNames,
    // The release before the APIs shipped as packages (`loose`) and the one after (`packaged`):
    // the upgrade e2e (test/e2e/local-stack.test.ts) runs from the first through this release to
    // the second. Goes with the loose declarations (components/crossplane/api-objects.ts).
    ...apiDeliveryFromEnv(process.env.KLUTCH_API_DELIVERY),
  });
  return {
    environment: config.environment,
    controlPlane: config.controlPlane.name,
    appClusters: config.appClusters.map((a) => a.name),
    namespaces: env.namespaces,
    bindExternalAddress: env.bindBackend.externalAddress,
    exportedApis: config.exportedApis.map((a) => `${a.resource}.${a.group}`),
    /** The bridge Deployment's name on the control plane, when the stack deploys it. */
    ...(env.bridge ? { bridgeDeployment: env.bridge.deploymentName } : {}),
    /** Per app cluster: its consumer namespace on the control plane and the APIs it binds. */
    bindings: env.bindingSummary(),
    /** The consumer identities' kubeconfigs for the control plane (secrets). */
    appClusterKubeconfigs: env.appClusterKubeconfigs(),
  };
}
