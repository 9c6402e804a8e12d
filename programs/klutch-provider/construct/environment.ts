import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { KlutchEnvironment } from "../../../components/environment";
import { SECRET_SETTINGS } from "../../../lib/config/schema";
import type { EnvironmentConfig } from "../../../components/config/schema";
import { validateEnvironment } from "../../../components/config/validate";
import type { CrossplanePlan } from "../../../lib/crossplane/crossplane-plan";
import { crossplaneSource, type CrossplaneSource } from "../../../host/automation/crossplane-source";
import { unsupportedInfrastructure } from "../../../lib/environment-plan";
import type { BridgePlan } from "../../../lib/bridge/bridge-plan";
import type { InstanceNamesServer } from "../../../lib/instance-names/plan";
import { bridgePlanOf, crossplanePlanOf, instanceNamesPlanOf, readOnce } from "../../stack/stack-config";
import { serverCheckAnswers } from "../../stack/server-checks";
import { toolchainCrossplaneClusterDirs } from "../../../host/automation/toolchain";
import { UNKNOWN } from "../../../providers/kit/schema-model";
import { type Args, type Constructor, given, refuse } from "../../../providers/kit/construct";
import { apiRaw } from "./bind";

/* eslint-disable @typescript-eslint/no-unsafe-assignment */
// Inputs arrive checked against programs/klutch-provider/catalog.ts (provider.ts); see providers/kit/construct.ts.

/** The secret settings: separate secret inputs of the Environment. */
const SECRETS = SECRET_SETTINGS;

/**
 * The environment's inputs are the config model's settings, one for one (the exported APIs'
 * claims aside): they go through the same validation as the stack config of this repository's
 * program (components/config/validate.ts), secrets included where their values are known, and the
 * problems come back named by the input's path (`controlPlane.network.nodeCidr: ...`).
 */
export function environmentConfig(
  values: Args,
  projectDir: string,
  toolchainDir: () => readonly (string | undefined)[] = () => toolchainCrossplaneClusterDirs(),
): {
  problems: string[];
  config?: EnvironmentConfig;
  crossplane?: { source: CrossplaneSource; plan: CrossplanePlan };
  bridge?: BridgePlan;
  instanceNames?: InstanceNamesServer[];
} {
  const raw: Args = given({
    environment: values.environment,
    imageRegistry: values.imageRegistry,
    controlPlane: values.controlPlane,
    appClusters: values.appClusters,
    oidc: values.oidc,
    exportedApis: values.exportedApis ? (values.exportedApis as Args[]).map(apiRaw) : undefined,
    localClusters: values.localClusters,
    crossplane: values.crossplane,
    bind: values.bind,
    bridge: values.bridge,
    instanceNames: values.instanceNames,
  });
  // A secret not known yet (a preview) is left to the component: only its presence is checked here.
  const unknownSecrets = SECRETS.filter((k) => values[k] === UNKNOWN);
  for (const key of SECRETS) if (values[key] !== undefined && values[key] !== UNKNOWN) raw[key] = values[key];
  // One read of each file (the control plane's node.json) for validation and both plans.
  const readFile = readOnce();
  const result = validateEnvironment(raw, { projectDir, readFile });
  if (!result.ok)
    return {
      problems: result.issues
        .filter((i) => !unknownSecrets.some((k) => i.path === `klutch:${k}`))
        .map((i) => `${i.path.replace(/^klutch:/, "")}: ${i.message}`),
    };
  const config = result.config;
  const problems = unsupportedInfrastructure(config).map(
    (i) => `${i.path.replace(/^klutch:/, "")}: ${i.message}`,
  );
  // How Crossplane runs and where its chart comes from, as this repository's program decides it.
  let crossplanePlan: CrossplanePlan | undefined;
  let crossplane: CrossplaneSource | undefined;
  try {
    crossplanePlan = crossplanePlanOf(config, projectDir, readFile);
    const source = crossplaneSource(config, crossplanePlan, projectDir, toolchainDir);
    if (source.ok) crossplane = source.source;
    else problems.push(`${source.setting}: ${source.message.replace(/klutch:/g, "")}`);
  } catch (e) {
    problems.push((e as Error).message);
  }
  // The bridge Deployment, as this repository's program plans it (programs/stack/stack-config.ts).
  let bridge: BridgePlan | undefined;
  try {
    bridge = bridgePlanOf(config, projectDir, readFile);
  } catch (e) {
    problems.push((e as Error).message);
  }
  // Each app cluster's names server, as this repository's program plans it.
  let instanceNames: InstanceNamesServer[] = [];
  try {
    instanceNames = instanceNamesPlanOf(config, projectDir, readFile);
  } catch (e) {
    problems.push((e as Error).message);
  }
  return {
    problems,
    config,
    instanceNames,
    ...(crossplane && crossplanePlan ? { crossplane: { source: crossplane, plan: crossplanePlan } } : {}),
    ...(bridge ? { bridge } : {}),
  };
}

export const environmentConstructors: Record<string, Constructor> = {
  "klutch:index:Environment": async (name, args, opts, values) => {
    // The engine starts the plugin in the program's directory (programs/klutch-provider/plugin keeps it).
    const projectDir = path.resolve((values.projectDir as string | undefined) ?? process.cwd());
    const checked = environmentConfig(values, projectDir);
    refuse("Environment", name, checked.problems);
    const config = checked.config!;
    // What the existing clusters' API servers refuse, as this repository's program asks it (a
    // preview too, asking nothing that writes).
    const answers = await serverCheckAnswers(
      config,
      projectDir,
      checked.crossplane!.plan.version,
      pulumi.runtime.isDryRun(),
    );
    for (const note of answers.notes) void pulumi.log.warn(note);
    refuse(
      "Environment",
      name,
      answers.issues.map((i) => `${i.path.replace(/^klutch:/, "")}: ${i.message}`),
    );
    const env = new KlutchEnvironment(
      name,
      {
        config,
        projectDir,
        crossplaneSource: checked.crossplane!.source,
        crossplanePlan: checked.crossplane!.plan,
        ...(checked.bridge ? { bridge: checked.bridge } : {}),
        instanceNames: checked.instanceNames ?? [],
        secrets: given({
          oidcClientSecret: args.oidcClientSecret,
          bindCookieSigningKey: args.bindCookieSigningKey,
          bindCookieEncryptionKey: args.bindCookieEncryptionKey,
          bindTlsCertificate: args.bindTlsCertificate,
          bindTlsKey: args.bindTlsKey,
          anyninesCredentials: args.anyninesCredentials,
          bridgePassphrase: args.bridgePassphrase,
          bridgeStateCredentials: args.bridgeStateCredentials,
        }),
      },
      opts,
    );
    return {
      resource: env,
      outputs: {
        namespaces: env.namespaces,
        bindExternalAddress: env.bindBackend.externalAddress,
        exportedApis: config.exportedApis.map((a) => `${a.resource}.${a.group}`),
        bindings: env.bindingSummary(),
        controlPlaneKubeconfig: env.controlPlane.kubeconfig,
        appClusterKubeconfigs: env.appClusterKubeconfigs(),
      },
    };
  },
};
