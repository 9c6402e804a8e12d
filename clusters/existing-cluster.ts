import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { ClusterAccess } from "./types";
import { kubeconfigProvider, readKubeconfigSecret } from "../providers/kit/kubeconfig-provider";

export interface ExistingClusterArgs {
  clusterName: string;
  /** Path of the cluster's kubeconfig file. */
  kubeconfigPath: string;
  /** Context in that file; its current-context when omitted. */
  context?: pulumi.Input<string>;
}

/** A cluster someone else runs, reached through a kubeconfig file. */
export class ExistingCluster extends pulumi.ComponentResource implements ClusterAccess {
  public readonly clusterName: string;
  public readonly provider: k8s.Provider;
  public readonly kubeconfig: pulumi.Output<string>;

  constructor(name: string, args: ExistingClusterArgs, opts?: pulumi.ComponentResourceOptions) {
    super("klutch:cluster:ExistingCluster", name, {}, opts);
    this.clusterName = args.clusterName;
    this.kubeconfig = readKubeconfigSecret(args.kubeconfigPath);
    this.provider = kubeconfigProvider(`${name}-provider`, this.kubeconfig, args.context, this);
    this.registerOutputs({ kubeconfig: this.kubeconfig });
  }
}
