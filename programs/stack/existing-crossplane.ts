import * as k8s from "@kubernetes/client-node";
import type { ServerCheckAnswers, ServerCheckInput } from "../../network/contract/implementation";
import { CROSSPLANE_CORE_SELECTOR, foreignCrossplaneIssues } from "../../lib/crossplane/foreign-crossplane";
import {
  foreignPackageIssues,
  installedCrossplaneIssues,
  type FoundPackage,
  type InstalledCrossplaneInput,
} from "../../lib/crossplane/installed-crossplane";
import { packageManifests } from "../../lib/crossplane/packages";
import { clientErrorMessage, isNotFound } from "../../lib/kube/client-errors";
import { kubeConfigFrom } from "../../lib/kube/kubeconfig";

/** The package kinds the environment makes, by their plural in pkg.crossplane.io/v1. */
const PACKAGE_PLURALS: Record<string, string> = {
  Provider: "providers",
  Function: "functions",
  Configuration: "configurations",
};

/**
 * Asks a control plane handed over by kubeconfig for the Crossplane cores it runs, in every
 * namespace. Without `crossplane.useInstalled` it refuses the ones this environment did not
 * install (lib/crossplane/foreign-crossplane.ts says why); with it, it refuses unless exactly one
 * usable core runs, and any package of the names the environment installs that is not its own
 * (lib/crossplane/installed-crossplane.ts). A list the server refuses (no right to list
 * Deployments everywhere, unreachable) refuses nothing: it is said, and the run goes on to meet
 * what it meets.
 */
export async function existingCrossplaneCheck(
  input: ServerCheckInput,
  version: string,
): Promise<ServerCheckAnswers> {
  const kc = kubeConfigFrom(input.kubeconfig, input.context);
  const { config } = input;
  const who = { environment: config.environment, controlPlane: config.controlPlane.name };
  try {
    if (config.crossplane?.useInstalled) {
      return await installedCrossplaneAnswers(kc, {
        core: { ...who, version, versionIsDefault: config.crossplane.version === undefined },
        packages: config.crossplane,
        owner: who,
      });
    }
    const list = await kc
      .makeApiClient(k8s.AppsV1Api)
      .listDeploymentForAllNamespaces({ labelSelector: CROSSPLANE_CORE_SELECTOR });
    return { issues: foreignCrossplaneIssues(list.items, { ...who, version }), notes: [] };
  } catch (e) {
    const why = clientErrorMessage(e).split("\n")[0];
    return {
      issues: [],
      notes: [
        `could not ask the control plane ${config.controlPlane.name} whether it runs a Crossplane already (${why}); going on`,
      ],
    };
  }
}

/**
 * Whether Klutch's packages can go onto the one Crossplane core the control plane runs, and
 * whether any package of the names they would take is someone else's: read from the cluster
 * (cores in every namespace, the package objects), judged by lib/crossplane/installed-crossplane.ts.
 * Shared by the environment and the provider's Crossplane component. A failed read of the cores
 * throws; one of the packages (a CRD registered a moment ago, not yet served, answers so) keeps
 * what the cores said and is a note: what could be asked is judged, what could not is said.
 */
export async function installedCrossplaneAnswers(
  kc: k8s.KubeConfig,
  q: {
    core: InstalledCrossplaneInput;
    packages: Parameters<typeof packageManifests>[0];
    owner: Parameters<typeof foreignPackageIssues>[2];
  },
): Promise<ServerCheckAnswers> {
  const list = await kc
    .makeApiClient(k8s.AppsV1Api)
    .listDeploymentForAllNamespaces({ labelSelector: CROSSPLANE_CORE_SELECTOR });
  const issues = installedCrossplaneIssues(list.items, q.core);
  const planned = packageManifests(q.packages, {}).filter((m) => m.kind in PACKAGE_PLURALS);
  try {
    const found = await packagesOnControlPlane(kc, new Set(planned.map((m) => m.kind)));
    return {
      issues: [...issues, ...foreignPackageIssues(found, planned.map(kindAndName), q.owner)],
      notes: [],
    };
  } catch (e) {
    const why = clientErrorMessage(e).split("\n")[0];
    return {
      issues,
      notes: [
        `could not ask the control plane ${q.core.controlPlane} which Crossplane packages it has already (${why}); going on`,
      ],
    };
  }
}

const kindAndName = (m: { kind: string; metadata: { name: string } }) => ({
  kind: m.kind,
  name: m.metadata.name,
});

/** The package objects of the given kinds; none of a kind whose CRD is not installed (404). */
async function packagesOnControlPlane(kc: k8s.KubeConfig, kinds: Set<string>): Promise<FoundPackage[]> {
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  const lists = await Promise.all(
    [...kinds].map(async (kind) => {
      try {
        const list = (await api.listClusterCustomObject({
          group: "pkg.crossplane.io",
          version: "v1",
          plural: PACKAGE_PLURALS[kind]!,
        })) as { items?: { metadata?: { name?: string; labels?: Record<string, string> } }[] };
        return (list.items ?? []).map((o) => ({
          kind,
          name: o.metadata?.name ?? "",
          ...(o.metadata?.labels ? { labels: o.metadata.labels } : {}),
        }));
      } catch (e) {
        if (isNotFound(e)) return [];
        throw e;
      }
    }),
  );
  return lists.flat();
}
