import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { ClusterAccess } from "./types";
import { kubeconfigProvider, readKubeconfigSecret } from "../providers/kit/kubeconfig-provider";

export interface LocalClusterArgs {
  /** The cluster's name in the environment config. */
  clusterName: string;
  /** The kubeconfig file that `npm run clusters -- up` wrote for this cluster. */
  kubeconfigPath: string;
}

/**
 * A cluster run on this machine by the local clusters command (kube-apiserver, etcd and
 * kube-controller-manager on loopback). The component adopts it through its kubeconfig;
 * starting and stopping the processes is the command's job, not Pulumi's.
 */
export class LocalCluster extends pulumi.ComponentResource implements ClusterAccess {
  public readonly clusterName: string;
  public readonly provider: k8s.Provider;
  public readonly kubeconfig: pulumi.Output<string>;

  constructor(name: string, args: LocalClusterArgs, opts?: pulumi.ComponentResourceOptions) {
    super("klutch:cluster:LocalCluster", name, {}, opts);
    this.clusterName = args.clusterName;
    this.kubeconfig = readKubeconfigSecret(args.kubeconfigPath);
    this.provider = kubeconfigProvider(`${name}-provider`, this.kubeconfig, undefined, this);
    this.registerOutputs({ kubeconfig: this.kubeconfig });
  }
}
