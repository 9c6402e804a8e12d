import * as aws from "@pulumi/aws";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { AwsClusterConfig } from "../../lib/config/schema";
import { kubeconfigProvider } from "../../providers/kit/kubeconfig-provider";
import { ClusterAccess } from "../types";
import { EksCluster } from "./eks-cluster";
import { ClusterVpc, RouteTableRef } from "./vpc";

export interface AwsClusterArgs {
  /** The cluster's name in the environment config. */
  clusterName: string;
  /** Its `aws` settings (validated). */
  aws: AwsClusterConfig;
  /** network.nodeCidr: the VPC CIDR. */
  vpcCidr: string;
  /** Name of the EKS cluster in AWS; default `<environment>-<clusterName>` given by the caller. */
  eksName: string;
  tags?: Record<string, string>;
}

/** What network paths need to know about an AWS cluster's network. */
export interface AwsNetwork {
  provider: aws.Provider;
  region: string;
  accountId?: string;
  vpcId: pulumi.Output<string>;
  /** The VPC id when it is known before deployment (an adopted VPC). */
  knownVpcId?: string;
  cidr: string;
  routeTables: RouteTableRef[];
}

/**
 * A cluster on AWS: its own AWS provider (region, account guard, assumed role), a VPC (or an
 * adopted one), an EKS cluster with a managed node group (or an adopted one), and the
 * Kubernetes provider every other component uses on it.
 */
export class AwsCluster extends pulumi.ComponentResource implements ClusterAccess {
  public readonly clusterName: string;
  public readonly provider: k8s.Provider;
  public readonly kubeconfig: pulumi.Output<string>;
  public readonly network: AwsNetwork;

  constructor(name: string, args: AwsClusterArgs, opts?: pulumi.ComponentResourceOptions) {
    super("klutch:cluster:AwsCluster", name, {}, opts);
    this.clusterName = args.clusterName;
    const a = args.aws;
    const accountId = a.accountId ?? a.roleArn?.split(":")[4];
    const awsProvider = new aws.Provider(
      `${name}-aws`,
      {
        region: a.region,
        ...(accountId ? { allowedAccountIds: [accountId] } : {}),
        ...(a.roleArn
          ? { assumeRoles: [{ roleArn: a.roleArn, sessionName: `klutch-${args.clusterName}` }] }
          : {}),
        ...(args.tags ? { defaultTags: { tags: args.tags } } : {}),
      },
      { parent: this },
    );
    const adoptedVpc = a.existingVpcId
      ? {
          vpcId: a.existingVpcId,
          routeTableIds: a.existingRouteTableIds ?? [],
          subnetIds: a.existingSubnetIds ?? [],
        }
      : undefined;
    const vpc = new ClusterVpc(
      `${name}-network`,
      {
        cidr: args.vpcCidr,
        region: a.region,
        availabilityZoneCount: a.availabilityZoneCount,
        provider: awsProvider,
        clusterName: a.existingClusterName ?? args.eksName,
        existing: adoptedVpc,
      },
      { parent: this },
    );
    const eks = new EksCluster(
      `${name}-cluster`,
      {
        clusterName: a.existingClusterName ?? args.eksName,
        region: a.region,
        provider: awsProvider,
        kubernetesVersion: a.kubernetesVersion,
        subnetIds: vpc.privateSubnetIds,
        nodeGroup: a.nodeGroup,
        kubeconfigRoleArn: a.roleArn,
        existing: !!a.existingClusterName,
      },
      { parent: this },
    );
    this.kubeconfig = eks.kubeconfig;
    this.provider = kubeconfigProvider(`${name}-provider`, this.kubeconfig, undefined, this);
    this.network = {
      provider: awsProvider,
      region: a.region,
      accountId,
      vpcId: vpc.vpcId,
      knownVpcId: a.existingVpcId,
      cidr: args.vpcCidr,
      routeTables: vpc.routeTables,
    };
    this.registerOutputs({ kubeconfig: this.kubeconfig, vpcId: vpc.vpcId });
  }
}
