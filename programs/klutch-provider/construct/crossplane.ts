import * as fs from "node:fs";
import * as pulumi from "@pulumi/pulumi";
import { Crossplane } from "../../../components/crossplane/crossplane";
import { crossplane } from "../../../lib/config/schema";
import { packageManifests } from "../../../lib/crossplane/packages";
import {
  COMPONENT_OWNER_LABEL,
  componentAsker,
  componentPackageOwner,
} from "../../../lib/crossplane/installed-crossplane";
import { clientErrorMessage } from "../../../lib/kube/client-errors";
import { kubeConfigFrom } from "../../../lib/kube/kubeconfig";
import { installedCrossplaneAnswers } from "../../stack/existing-crossplane";
import { crossplaneVersionProblem, defaultCrossplaneVersion } from "../../../lib/config/crossplane-versions";
import { localCrossplaneSource } from "../../../host/automation/local-crossplane-source";
import { toolchainCrossplaneClusterDirs } from "../../../host/automation/toolchain";
import { isKnown } from "../../../providers/kit/schema-model";
import {
  type Args,
  type Constructor,
  clusterProvider,
  given,
  refuse,
  zodProblems,
} from "../../../providers/kit/construct";

/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument */
// Inputs arrive checked against programs/klutch-provider/catalog.ts (provider.ts); see providers/kit/construct.ts.

function folderProblem(field: string, dir: unknown): string[] {
  if (typeof dir !== "string" || fs.existsSync(dir)) return [];
  return [`${field} "${dir}" is not a folder on this machine; name an existing folder or leave it out`];
}

/** The config model's crossplane settings from the inputs, its checks, and the credentials'. */
export function crossplaneProblems(
  values: Args,
  toolchainDir: () => readonly (string | undefined)[] = () => toolchainCrossplaneClusterDirs(),
) {
  const raw = given({
    version: values.version,
    chartRepository: values.chartRepository,
    chartPath: values.chartPath,
    providerKubernetes: values.providerKubernetes,
    providerAnynines: values.providerAnynines,
    functionPatchAndTransform: values.functionPatchAndTransform,
    dataservicesConfiguration: values.dataservicesConfiguration,
    functionKlutch: values.functionKlutch,
    anyninesServices: values.anyninesServices,
  });
  const parsed = zodProblems(crossplane, raw);
  const problems = [...parsed.problems];
  if (values.useInstalled !== true)
    problems.push(
      ...folderProblem("chartPath", values.chartPath),
      ...folderProblem("crdsPath", values.crdsPath),
    );
  else {
    for (const key of ["chartRepository", "chartPath", "crdsPath", "toolchainChart", "runLocally"])
      if (values[key] !== undefined && values[key] !== false)
        problems.push(
          `${key} is ${JSON.stringify(values[key])}, but useInstalled puts Klutch's packages on the Crossplane the cluster already runs and installs none: leave ${key} out, or useInstalled`,
        );
  }
  let source: { chart: { repository: string } | { path: string }; crdsPath?: string } | undefined;
  let version: string | undefined;
  if (parsed.data) {
    const xp = parsed.data;
    const runLocally = values.runLocally === true;
    version = xp.version ?? defaultCrossplaneVersion(runLocally);
    const versionProblem = crossplaneVersionProblem(version, runLocally);
    if (versionProblem) problems.push(`version ${versionProblem}`);
    if (values.toolchainChart) {
      if (values.chartPath !== undefined || values.crdsPath !== undefined)
        problems.push(
          "toolchainChart takes the chart and CRDs from the toolchain; leave chartPath and crdsPath out",
        );
      try {
        const local = localCrossplaneSource(toolchainDir(), version);
        source = { chart: { path: local.chartPath }, crdsPath: local.crdsPath };
      } catch (e) {
        problems.push(
          `toolchainChart: ${(e as Error).message.replace(/(klutch:)?crossplane\.version/g, "version")}`,
        );
      }
    } else {
      source = {
        chart: xp.chartPath ? { path: xp.chartPath } : { repository: xp.chartRepository },
        ...(values.crdsPath ? { crdsPath: values.crdsPath as string } : {}),
      };
    }
    // Every service's ProviderConfig reads its credentials from a Secret made here.
    const creds = values.anyninesCredentials as unknown;
    if (values.installProviderConfigs !== false && isKnown(creds)) {
      const byService = (creds ?? {}) as Record<string, Args | undefined>;
      for (const svc of xp.anyninesServices) {
        const parts = svc.backupManagerUrl ? ["serviceBroker", "backupManager"] : ["serviceBroker"];
        for (const part of parts)
          if (!byService[svc.name]?.[part])
            problems.push(
              `anyninesCredentials.${svc.name}.${part} is required (username and password of anyninesServices "${svc.name}")`,
            );
      }
    }
  }
  return { problems, config: parsed.data, source, version };
}

/**
 * With `useInstalled`, what the cluster's API server says of its Crossplane before anything is
 * registered (programs/stack/existing-crossplane.ts, as an environment asks it): the issues, and
 * a note when it could not be asked. Not asked while the kubeconfig is not known (a preview of a
 * cluster made in the same program).
 */
export async function installedCoreProblems(
  name: string,
  values: Args,
  checked: { version: string; namespace: string; packages: Parameters<typeof packageManifests>[0] },
): Promise<string[]> {
  if (values.useInstalled !== true || !isKnown(values.kubeconfig)) return [];
  const cluster = "of this component's kubeconfig";
  try {
    const kc = kubeConfigFrom(values.kubeconfig as string);
    const answers = await installedCrossplaneAnswers(kc, {
      core: {
        controlPlane: cluster,
        version: checked.version,
        versionIsDefault: values.version === undefined,
        asker: componentAsker(checked.namespace),
      },
      packages: checked.packages,
      owner: componentPackageOwner(name, cluster),
    });
    for (const note of answers.notes) void pulumi.log.warn(note);
    return answers.issues.map((i) => `${i.path}: ${i.message}`);
  } catch (e) {
    const why = clientErrorMessage(e).split("\n")[0];
    void pulumi.log.warn(
      `could not ask the cluster whether it runs a Crossplane Klutch can use (${why}); going on`,
    );
    return [];
  }
}

export const crossplaneConstructors: Record<string, Constructor> = {
  "klutch:crossplane:Crossplane": async (name, args, opts, values) => {
    const checked = crossplaneProblems(values);
    refuse("Crossplane", name, checked.problems);
    const xp = checked.config!;
    const useInstalled = values.useInstalled === true;
    // Never empty: an empty labels map is a diff on every run (the API server drops it). On an
    // installed core the packages carry the component's name, which tells its own from others'.
    const labels = {
      "app.kubernetes.io/managed-by": "pulumi",
      ...args.labels,
      ...(useInstalled ? { [COMPONENT_OWNER_LABEL]: name } : {}),
    } as Record<string, string>;
    const packages = {
      providerKubernetes: xp.providerKubernetes,
      providerAnynines: xp.providerAnynines,
      functionPatchAndTransform: xp.functionPatchAndTransform,
      dataservicesConfiguration: xp.dataservicesConfiguration,
      ...(xp.functionKlutch ? { functionKlutch: xp.functionKlutch } : {}),
    };
    const namespace = (args.namespace ?? "crossplane-system") as string;
    const version = checked.version!;
    refuse("Crossplane", name, await installedCoreProblems(name, values, { version, namespace, packages }));
    const component = new Crossplane(
      name,
      {
        provider: clusterProvider(name, args.kubeconfig, opts),
        namespace,
        version,
        chart: checked.source!.chart,
        crdsPath: checked.source!.crdsPath,
        packages,
        anyninesServices: xp.anyninesServices,
        anyninesCredentials: args.anyninesCredentials,
        installProviderConfigs: args.installProviderConfigs ?? true,
        skipAwait: args.skipAwait ?? false,
        runLocally: args.runLocally === true,
        useInstalled,
        labels,
      },
      opts,
    );
    return {
      resource: component,
      outputs: {
        namespace,
        packages: packageManifests(packages, labels).map((m) => `${m.kind}/${m.metadata.name}`),
      },
    };
  },
};
