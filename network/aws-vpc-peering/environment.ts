import { formatPath } from "../../lib/config/messages";
import { AwsCluster } from "../../clusters/aws/aws-cluster";
import type { EnvironmentBuilder } from "../contract/environment-context";
import type { AwsVpcPeeringConnectorConfig } from "./model/config";
import { VpcPeering } from "./vpc-peering";

/** A VPC peering from each app cluster's VPC to the control plane's (data-service) VPC. */
export const awsVpcPeeringEnvironment: EnvironmentBuilder<AwsVpcPeeringConnectorConfig> = (ctx, users) => {
  const out: Record<string, VpcPeering> = {};
  for (const { app, connector, index, access } of users) {
    const label = formatPath(["appClusters", index]);
    if (!(access instanceof AwsCluster) || !(ctx.controlPlane instanceof AwsCluster))
      throw new Error(`internal: ${label} peers non-AWS clusters (validation should have caught this)`);
    const req = access.network;
    const acc = ctx.controlPlane.network;
    out[app.name] = new VpcPeering(
      `${ctx.name}-${app.name}-peering`,
      {
        requester: { label, ...req, cidrs: [req.cidr] },
        accepter: { label: formatPath(["controlPlane"]), ...acc, cidrs: [acc.cidr] },
        accepterRoleArn: connector.accepter?.roleArn,
        dataServicePorts: connector.dataServicePorts,
        tags: { "klutch.anynines.com/environment": ctx.config.environment },
      },
      { parent: ctx.parent },
    );
  }
  return out;
};
