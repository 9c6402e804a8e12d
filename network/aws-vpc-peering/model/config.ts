import { z } from "zod";
import { dataServicePorts } from "../../../lib/config/fields";

/** AWS VPC peering's settings in an app cluster's `networkConnector`. */
export const awsVpcPeeringConnector = z
  .object({
    implementation: z.literal("awsVpcPeering"),
    /** Credentials of the accepter (data-service) side, needed across accounts. */
    accepter: z
      .object({ roleArn: z.string().regex(/^arn:aws:iam::\d{12}:role\/.+$/, "must be an IAM role ARN") })
      .strict()
      .optional(),
    dataServicePorts,
  })
  .strict();

export type AwsVpcPeeringConnectorConfig = z.output<typeof awsVpcPeeringConnector>;

/** The account a cluster lives in: its accountId, else the account of the role the provider assumes. */
