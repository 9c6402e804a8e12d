import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";

/** What every cluster component hands on to the components that run on it. */
export interface ClusterAccess {
  /** The cluster's name in the environment config. */
  readonly clusterName: string;
  /** A Kubernetes provider bound to this cluster; everything on the cluster is created through it. */
  readonly provider: k8s.Provider;
  /** The kubeconfig, always a Pulumi secret. */
  readonly kubeconfig: pulumi.Output<string>;
}
