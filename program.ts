import * as pulumi from "@pulumi/pulumi";
import { KlutchEnvironment } from "./components/environment";
import { loadEnvironment } from "./lib/config/load";
import { renderIssues } from "./lib/config/messages";
import { unsupportedInfrastructure } from "./lib/environment-plan";

/**
 * The Pulumi program: validate the whole stack config first, then register the
 * environment. Any problem stops it before a single resource is registered.
 */
export function klutchProgram(): Record<string, unknown> {
  const { config, projectDir } = loadEnvironment();
  const unsupported = unsupportedInfrastructure(config);
  if (unsupported.length > 0) throw new pulumi.RunError(renderIssues(unsupported, pulumi.getStack()));

  const env = new KlutchEnvironment(config.environment, { config, projectDir });
  return {
    environment: config.environment,
    controlPlane: config.controlPlane.name,
    appClusters: config.appClusters.map((a) => a.name),
    namespaces: env.namespaces,
  };
}
