/** IAM documents and managed policies an EKS cluster and its managed node group need. */

export function assumeRolePolicy(service: "eks.amazonaws.com" | "ec2.amazonaws.com"): string {
  return JSON.stringify({
    Version: "2012-10-17",
    Statement: [{ Effect: "Allow", Principal: { Service: service }, Action: "sts:AssumeRole" }],
  });
}

/** AWS-managed policies, attached by ARN (partition-aware for GovCloud). */
export function clusterPolicyArns(partition: string): string[] {
  return [`arn:${partition}:iam::aws:policy/AmazonEKSClusterPolicy`];
}

export function nodePolicyArns(partition: string): string[] {
  return [
    `arn:${partition}:iam::aws:policy/AmazonEKSWorkerNodePolicy`,
    `arn:${partition}:iam::aws:policy/AmazonEKS_CNI_Policy`,
    `arn:${partition}:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly`,
  ];
}

export function partitionOf(region: string): string {
  return region.startsWith("us-gov-") ? "aws-us-gov" : "aws";
}

/** Short name of a managed policy ARN, for resource names. */
export function policyName(arn: string): string {
  return (arn.split("/").pop() ?? arn).replace(/_/g, "-").toLowerCase();
}
