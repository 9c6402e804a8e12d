import * as path from "node:path";
import * as k8s from "@pulumi/kubernetes";
import type * as pulumi from "@pulumi/pulumi";
import { localKubeconfigPath } from "../config/validate";
import type { EnvironmentConfig } from "../config/schema";
import type { ClusterConfig } from "../../lib/config/schema";
import type { NamespacePlan } from "../../lib/environment-plan";
import { AwsCluster } from "../../clusters/aws/aws-cluster";
import { ExistingCluster } from "../../clusters/existing-cluster";
import { LocalCluster } from "../../clusters/local-cluster";
import { OpenstackCluster } from "../../clusters/openstack/openstack-cluster";
import type { ClusterAccess } from "../../clusters/types";

/** One cluster of the environment, as its infrastructure stands it up or adopts it. */
export function clusterAccess(
  parent: pulumi.Resource,
  name: string,
  cluster: ClusterConfig,
  env: { config: EnvironmentConfig; projectDir: string },
): ClusterAccess {
  const opts = { parent };
  switch (cluster.infrastructure) {
    case "local":
      return new LocalCluster(
        name,
        {
          clusterName: cluster.name,
          kubeconfigPath: localKubeconfigPath(
            env.projectDir,
            env.config.localClusters.stateDir,
            cluster.name,
          ),
        },
        opts,
      );
    case "existing":
      if (!cluster.kubeconfig)
        throw new Error(`internal: ${cluster.name} has no kubeconfig (validation should have caught this)`);
      return new ExistingCluster(
        name,
        {
          clusterName: cluster.name,
          kubeconfigPath: path.resolve(env.projectDir, cluster.kubeconfig.path),
          context: cluster.kubeconfig.context,
        },
        opts,
      );
    case "aws":
      if (!cluster.aws || !cluster.network)
        throw new Error(
          `internal: ${cluster.name} has no aws or network settings (validation should have caught this)`,
        );
      return new AwsCluster(
        name,
        {
          clusterName: cluster.name,
          aws: cluster.aws,
          vpcCidr: cluster.network.nodeCidr,
          eksName: `${env.config.environment}-${cluster.name}`,
          tags: { "klutch.anynines.com/environment": env.config.environment },
        },
        opts,
      );
    case "openstack":
      if (!cluster.openstack || !cluster.network)
        throw new Error(
          `internal: ${cluster.name} has no openstack or network settings (validation should have caught this)`,
        );
      return new OpenstackCluster(
        name,
        {
          clusterName: cluster.name,
          openstack: cluster.openstack,
          cidr: cluster.network.nodeCidr,
          kubeconfigPath: cluster.kubeconfig
            ? path.resolve(env.projectDir, cluster.kubeconfig.path)
            : undefined,
          kubeconfigContext: cluster.kubeconfig?.context,
        },
        opts,
      );
  }
}

/** The planned namespaces, by `<cluster>/<namespace>`, each on its cluster's provider. */
export function plannedNamespaceResources(
  parent: pulumi.Resource,
  name: string,
  plans: readonly NamespacePlan[],
  clusters: Readonly<Record<string, ClusterAccess>>,
  labels: Record<string, string>,
): Record<string, k8s.core.v1.Namespace> {
  const out: Record<string, k8s.core.v1.Namespace> = {};
  for (const plan of plans) {
    const cluster = clusters[plan.cluster];
    if (!cluster) throw new Error(`internal: no cluster ${plan.cluster}`);
    out[`${plan.cluster}/${plan.namespace}`] = new k8s.core.v1.Namespace(
      `${name}-${plan.cluster}-${plan.namespace}`,
      { metadata: { name: plan.namespace, labels } },
      { parent, provider: cluster.provider },
    );
  }
  return out;
}
