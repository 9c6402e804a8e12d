import * as pulumi from "@pulumi/pulumi";
import { KlutchEnvironment, type ApiDelivery } from "../../components/environment";
import { loadEnvironment } from "./stack-config";
import { renderIssues } from "../../lib/config/messages";
import { unsupportedInfrastructure } from "../../lib/environment-plan";
import { crossplaneSource } from "../../host/automation/crossplane-source";
import { toolchainEnv } from "../../host/automation/toolchain";

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
export function klutchProgram(): Record<string, unknown> {
  const { config, projectDir, secrets, bridge, crossplane } = loadEnvironment();
  const unsupported = unsupportedInfrastructure(config);
  if (unsupported.length > 0) throw new pulumi.RunError(renderIssues(unsupported, pulumi.getStack()));
  const source = crossplaneSource(
    config,
    crossplane,
    projectDir,
    toolchainEnv().KLUTCH_CROSSPLANE_CLUSTER_DIR,
  );
  if (!source.ok)
    throw new pulumi.RunError(
      renderIssues([{ path: `klutch:${source.setting}`, message: source.message }], pulumi.getStack()),
    );

  const env = new KlutchEnvironment(config.environment, {
    config,
    projectDir,
    secrets,
    crossplaneSource: source.source,
    crossplanePlan: crossplane,
    ...(bridge ? { bridge } : {}),
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
