/**
 * Namespaces an environment would make on a cluster it did not make (infrastructure `existing`)
 * that are there already and are not its own: refused before anything is registered. Pure; the
 * read is programs/stack/existing-namespaces.ts.
 *
 * Why refuse rather than go on: Pulumi's Kubernetes provider creates an object with server-side
 * apply by default, and "we always send a PATCH request during creates with SSA enabled. This
 * means that we currently always upsert the object" (pulumi-kubernetes provider/v4
 * pkg/await/await.go, Creation). A namespace of the same name is taken over without a word, and
 * the environment's destroy then deletes it, with everything the operator keeps in it.
 */
import type { ConfigIssue } from "../config/messages";
import { formatPath } from "../config/messages";
import type { EnvironmentConfig } from "../config/schema";
import { consumerNamespace } from "../bind/app-cluster-plan";
import { plannedNamespaces } from "../environment-plan";
import { notOwnedBy } from "./ownership";

/** One existing cluster's namespaces the environment makes there, and where its kubeconfig is set. */
export interface ClusterNamespaces {
  cluster: string;
  /** The kubeconfig's setting, e.g. `klutch:appClusters[0].kubeconfig`. */
  setting: string;
  namespaces: string[];
}

/** Per cluster handed over by kubeconfig, the namespaces the environment creates on it. */
export function namespacesOnExistingClusters(config: EnvironmentConfig): ClusterNamespaces[] {
  const planned = plannedNamespaces(config);
  const clusters = [
    { c: config.controlPlane, at: ["controlPlane"] as (string | number)[] },
    ...config.appClusters.map((c, i) => ({ c, at: ["appClusters", i] as (string | number)[] })),
  ];
  return clusters
    .filter(({ c }) => c.infrastructure === "existing")
    .map(({ c, at }) => ({
      cluster: c.name,
      setting: formatPath([...at, "kubeconfig"]),
      namespaces: [
        ...planned.filter((p) => p.cluster === c.name).map((p) => p.namespace),
        // Each app cluster's consumer namespace on the control plane (components/bind/app-cluster-binding.ts).
        ...(c === config.controlPlane
          ? config.appClusters.map((a) => consumerNamespace(config.bind.namespacePrefix, a.name))
          : []),
      ],
    }));
}

/** The found namespaces (those that exist) that are not this environment's own. */
export function foreignNamespaceIssues(
  found: readonly { name: string; labels?: Record<string, string> }[],
  on: ClusterNamespaces,
  environment: string,
): ConfigIssue[] {
  return found.flatMap((ns) => {
    const why = notOwnedBy(ns.labels, environment);
    if (why === undefined) return [];
    const message =
      `the cluster ${on.cluster} already has namespace ${ns.name}, which environment ${environment} did not make (${why}); ` +
      `the environment makes ${ns.name} itself, and would take it over and delete it, with everything in it, on destroy: ` +
      `move what it holds elsewhere and delete it, or hand over a cluster without it`;
    return [{ path: on.setting, message }];
  });
}
