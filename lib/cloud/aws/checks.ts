import type { AwsClusterConfig } from "../../config/schema";
import { cidrProblem } from "../../net/cidr";
import type { AddIssue } from "../../config/located";
import { availabilityZoneProblem } from "./regions";
import { vpcCidrProblem } from "./subnets";

/** The rules of an AWS cluster entry that its schema cannot say: zones, adoption, VPC size, node group. */
export function checkAwsCluster(
  aws: AwsClusterConfig,
  nodeCidr: string | undefined,
  hasKubeconfig: boolean,
  at: (string | number)[],
  add: AddIssue,
): void {
  const zones = availabilityZoneProblem(aws.region, aws.availabilityZoneCount);
  if (zones) add([...at, "aws", "availabilityZoneCount"], zones);
  if (hasKubeconfig)
    add(
      [...at, "kubeconfig"],
      'is not used with infrastructure "aws"; adopt a cluster with aws.existingClusterName',
    );
  if (aws.existingVpcId) {
    if (!aws.existingRouteTableIds?.length)
      add(
        [...at, "aws", "existingRouteTableIds"],
        `is required with existingVpcId: list the route tables of ${aws.existingVpcId} that peered networks need routes in`,
      );
    if (!aws.existingClusterName && !aws.existingSubnetIds?.length)
      add(
        [...at, "aws", "existingSubnetIds"],
        `is required with existingVpcId when the EKS cluster is created: list the private subnets of ${aws.existingVpcId} (at least two zones)`,
      );
  } else {
    for (const field of ["existingClusterName", "existingRouteTableIds", "existingSubnetIds"] as const) {
      if (aws[field] !== undefined)
        add(
          [...at, "aws", field],
          "needs aws.existingVpcId (the VPC it lives in); set it or remove this field",
        );
    }
    if (nodeCidr && !cidrProblem(nodeCidr)) {
      const problem = vpcCidrProblem(nodeCidr, aws.availabilityZoneCount);
      if (problem) add([...at, "network", "nodeCidr"], problem);
    }
  }
  const g = aws.nodeGroup;
  if (!(g.minSize <= g.desiredSize && g.desiredSize <= g.maxSize)) {
    add(
      [...at, "aws", "nodeGroup"],
      `needs minSize <= desiredSize <= maxSize (got ${g.minSize}, ${g.desiredSize}, ${g.maxSize})`,
    );
  }
}
