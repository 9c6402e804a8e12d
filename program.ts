import * as pulumi from "@pulumi/pulumi";
import { KlutchEnvironment } from "./components/environment";
import { loadEnvironment } from "./tooling/load-config";
import { renderIssues } from "./lib/config/messages";
import { unsupportedInfrastructure } from "./lib/environment-plan";
import { EnvironmentConfig } from "./lib/config/schema";
import { localCrossplaneSource } from "./lib/crossplane/local-source";
import { toolchainEnv } from "./tooling/toolchain";
import * as path from "node:path";

/** Chart and CRD locations for Crossplane; any problem is reported before registration. */
function resolveCrossplaneSource(config: EnvironmentConfig, projectDir: string) {
  const xp = config.crossplane;
  if (xp.runLocally) {
    try {
      const local = localCrossplaneSource(toolchainEnv().KLUTCH_CROSSPLANE_CLUSTER_DIR, xp.version);
      return { chart: { path: local.chartPath }, crdsPath: local.crdsPath };
    } catch (e) {
      throw new pulumi.RunError(
        renderIssues(
          [{ path: "klutch:crossplane.runLocally", message: (e as Error).message }],
          pulumi.getStack(),
        ),
      );
    }
  }
  return {
    chart: xp.chartPath
      ? { path: path.resolve(projectDir, xp.chartPath) }
      : { repository: xp.chartRepository },
  };
}

/**
 * The Pulumi program: validate the whole stack config first, then register the
 * environment. Any problem stops it before a single resource is registered.
 */
export function klutchProgram(): Record<string, unknown> {
  const { config, projectDir, secrets, bridge } = loadEnvironment();
  const unsupported = unsupportedInfrastructure(config);
  if (unsupported.length > 0) throw new pulumi.RunError(renderIssues(unsupported, pulumi.getStack()));
  const crossplaneSource = resolveCrossplaneSource(config, projectDir);

  const env = new KlutchEnvironment(config.environment, {
    config,
    projectDir,
    secrets,
    crossplaneSource,
    ...(bridge ? { bridge } : {}),
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
