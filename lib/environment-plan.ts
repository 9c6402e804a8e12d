import { EnvironmentConfig, Infrastructure } from "./config/schema";
import { ConfigIssue, formatPath } from "./config/messages";

/** Namespaces the later components use, per cluster role. */
export const CONTROL_PLANE_NAMESPACES = ["crossplane-system", "bind", "klutch-network"] as const;
export const APP_CLUSTER_NAMESPACES = ["klutch-bind"] as const;

export interface NamespacePlan {
  cluster: string;
  namespace: string;
}

/**
 * Each cluster's namespaces the environment makes (and destroy deletes). Crossplane's is the
 * operator's where the environment runs on their core (`crossplane.useInstalled`): used, not made.
 */
export function plannedNamespaces(config: EnvironmentConfig): NamespacePlan[] {
  const controlPlane = CONTROL_PLANE_NAMESPACES.filter(
    (ns) => !(ns === "crossplane-system" && config.crossplane.useInstalled),
  );
  return [
    ...controlPlane.map((namespace) => ({ cluster: config.controlPlane.name, namespace })),
    ...config.appClusters.flatMap((app) =>
      APP_CLUSTER_NAMESPACES.map((namespace) => ({ cluster: app.name, namespace })),
    ),
  ];
}

/** The label naming the environment an object belongs to (environmentLabels). */
export const ENVIRONMENT_LABEL = "klutch.anynines.com/environment";

/** Labels every object of the environment carries, so `kubectl get -l` finds them all. */
export function environmentLabels(environment: string): Record<string, string> {
  return {
    [ENVIRONMENT_LABEL]: environment,
    "app.kubernetes.io/part-of": "klutch",
    "app.kubernetes.io/managed-by": "pulumi",
  };
}

/** Infrastructures this version can stand clusters up on. */
export const SUPPORTED_INFRASTRUCTURES: readonly Infrastructure[] = ["local", "existing", "aws", "openstack"];

/**
 * Clusters on infrastructures whose components are not part of this version. Reported
 * before anything is registered, like every other config problem.
 */
export function unsupportedInfrastructure(config: EnvironmentConfig): ConfigIssue[] {
  const clusters = [
    { at: ["controlPlane"] as (string | number)[], c: config.controlPlane },
    ...config.appClusters.map((c, i) => ({ at: ["appClusters", i] as (string | number)[], c })),
  ];
  return clusters
    .filter(({ c }) => !SUPPORTED_INFRASTRUCTURES.includes(c.infrastructure))
    .map(({ at, c }) => ({
      path: formatPath([...at, "infrastructure"]),
      message: `"${c.infrastructure}" clusters cannot be created by this version yet; use "existing" with the cluster's kubeconfig, or one of ${SUPPORTED_INFRASTRUCTURES.join(", ")}`,
    }));
}
