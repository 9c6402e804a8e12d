import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import {
  assumeRolePolicy,
  clusterPolicyArns,
  nodePolicyArns,
  partitionOf,
  policyName,
} from "../../lib/cloud/aws/iam";
import { renderEksKubeconfig } from "../../lib/cloud/aws/kubeconfig";

export interface EksNodeGroupSettings {
  instanceType: string;
  minSize: number;
  desiredSize: number;
  maxSize: number;
}

export interface EksClusterArgs {
  /** The EKS cluster's name in AWS. */
  clusterName: string;
  region: string;
  provider: aws.Provider;
  kubernetesVersion?: string;
  /** Private subnets: the control plane's ENIs and the nodes go there. */
  subnetIds?: pulumi.Input<string>[];
  nodeGroup?: EksNodeGroupSettings;
  /** Role `aws eks get-token` assumes in the kubeconfig (cross-account access). */
  kubeconfigRoleArn?: string;
  tags?: Record<string, string>;
  /** Adopt this cluster (by name) instead of creating one; only its kubeconfig is derived. */
  existing?: boolean;
}

/**
 * An EKS cluster from AWS primitives: the cluster role, the node role with the three managed
 * policies a managed node group needs, the cluster (API authentication through access entries,
 * the creator an admin) and one managed node group. The kubeconfig authenticates with
 * `aws eks get-token` and is a Pulumi secret.
 */
export class EksCluster extends pulumi.ComponentResource {
  public readonly kubeconfig: pulumi.Output<string>;
  public readonly clusterName: pulumi.Output<string>;
  /** The security group EKS gives the cluster (nodes and control plane); undefined when adopted. */
  public readonly clusterSecurityGroupId: pulumi.Output<string>;

  constructor(name: string, args: EksClusterArgs, opts?: pulumi.ComponentResourceOptions) {
    super("klutch:aws:EksCluster", name, {}, opts);
    const opt = { parent: this, provider: args.provider };
    const kubeconfigOf = (c: { name: string; endpoint: string; ca: string }) =>
      renderEksKubeconfig({
        clusterName: c.name,
        endpoint: c.endpoint,
        certificateAuthorityData: c.ca,
        region: args.region,
        roleArn: args.kubeconfigRoleArn,
      });

    if (args.existing) {
      const found = aws.eks.getClusterOutput({ name: args.clusterName }, opt);
      this.clusterName = found.name;
      this.clusterSecurityGroupId = found.vpcConfig.clusterSecurityGroupId;
      this.kubeconfig = pulumi.secret(
        pulumi
          .all([found.name, found.endpoint, found.certificateAuthorities])
          .apply(([n, endpoint, cas]) => kubeconfigOf({ name: n, endpoint, ca: cas[0]?.data ?? "" })),
      );
      this.registerOutputs({ kubeconfig: this.kubeconfig, clusterName: this.clusterName });
      return;
    }
    if (!args.subnetIds?.length || !args.nodeGroup) {
      throw new Error(`EksCluster ${name}: subnetIds and nodeGroup are required to create a cluster`);
    }
    const partition = partitionOf(args.region);

    const clusterRole = new aws.iam.Role(
      `${name}-cluster-role`,
      { assumeRolePolicy: assumeRolePolicy("eks.amazonaws.com"), tags: args.tags },
      opt,
    );
    const clusterAttachments = clusterPolicyArns(partition).map(
      (arn) =>
        new aws.iam.RolePolicyAttachment(
          `${name}-cluster-${policyName(arn)}`,
          { role: clusterRole.name, policyArn: arn },
          opt,
        ),
    );
    const nodeRole = new aws.iam.Role(
      `${name}-node-role`,
      { assumeRolePolicy: assumeRolePolicy("ec2.amazonaws.com"), tags: args.tags },
      opt,
    );
    const nodeAttachments = nodePolicyArns(partition).map(
      (arn) =>
        new aws.iam.RolePolicyAttachment(
          `${name}-node-${policyName(arn)}`,
          { role: nodeRole.name, policyArn: arn },
          opt,
        ),
    );

    const cluster = new aws.eks.Cluster(
      `${name}-eks`,
      {
        name: args.clusterName,
        roleArn: clusterRole.arn,
        version: args.kubernetesVersion,
        vpcConfig: { subnetIds: args.subnetIds, endpointPrivateAccess: true, endpointPublicAccess: true },
        accessConfig: { authenticationMode: "API", bootstrapClusterCreatorAdminPermissions: true },
        tags: args.tags,
      },
      { ...opt, dependsOn: clusterAttachments },
    );
    const g = args.nodeGroup;
    new aws.eks.NodeGroup(
      `${name}-nodes`,
      {
        clusterName: cluster.name,
        nodeRoleArn: nodeRole.arn,
        subnetIds: args.subnetIds,
        instanceTypes: [g.instanceType],
        scalingConfig: { minSize: g.minSize, desiredSize: g.desiredSize, maxSize: g.maxSize },
        tags: args.tags,
      },
      // The node group lets Pulumi scale it, but the cluster autoscaler may change desiredSize.
      { ...opt, dependsOn: nodeAttachments, ignoreChanges: ["scalingConfig.desiredSize"] },
    );
    this.clusterName = cluster.name;
    this.clusterSecurityGroupId = cluster.vpcConfig.clusterSecurityGroupId;
    this.kubeconfig = pulumi.secret(
      pulumi
        .all([cluster.name, cluster.endpoint, cluster.certificateAuthority])
        .apply(([n, endpoint, ca]) => kubeconfigOf({ name: n, endpoint, ca: ca.data ?? "" })),
    );
    this.registerOutputs({ kubeconfig: this.kubeconfig, clusterName: this.clusterName });
  }
}
