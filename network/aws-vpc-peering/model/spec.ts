/* eslint-disable @typescript-eslint/no-require-imports -- the Pulumi side, loaded when asked (implementation.ts) */
import { formatPath } from "../../../lib/config/messages";
import { cidrInside, cidrProblem } from "../../../lib/net/cidr";
import type { GroupProgram } from "../../contract/bridge-target";
import type { ProviderSurface } from "../../contract/provider-surface";
import type { EnvironmentBuilder } from "../../contract/environment-context";
import type { AwsVpcPeeringConnectorConfig } from "./config";
import type { ImplementationSpec } from "../../contract/implementation";
import { checkRoutedPair } from "../../contract/routed-checks";
import { awsVpcPeeringConnector } from "./config";
import type { AwsClusterConfig } from "../../../lib/config/schema";

/** The implementation as the registry (network/registry.ts) lists it. */
export const awsVpcPeering: ImplementationSpec<"awsVpcPeering", typeof awsVpcPeeringConnector> = {
  name: "awsVpcPeering",
  realisation: "routed",
  summary:
    "a VPC peering between the app cluster's and the control plane's VPCs, with routes and security group rules for the data-service ports",
  schema: awsVpcPeeringConnector,
  check({ users, controlPlane: cp, add }) {
    if (!cp) return;
    for (const app of users) {
      if (!checkRoutedPair(app, cp, "awsVpcPeering", "aws", add)) continue;
      const at = [...app.at, "networkConnector"];
      const dataCidr = cp.value.dataServiceCidr;
      const cpCidr = cp.value.network?.nodeCidr;
      if (
        dataCidr &&
        cpCidr &&
        !cidrProblem(dataCidr) &&
        !cidrProblem(cpCidr) &&
        !cidrInside(dataCidr, cpCidr)
      ) {
        add(
          ["controlPlane", "dataServiceCidr"],
          `${dataCidr} must lie inside the control plane VPC ${cpCidr} for awsVpcPeering (${formatPath(at)}): peering routes only the VPC's own CIDR`,
        );
      }
      const appAccount = awsAccountOf(app.value.aws);
      const cpAccount = awsAccountOf(cp.value.aws);
      if (appAccount && cpAccount && appAccount !== cpAccount && !app.connector.accepter) {
        add(
          [...at, "accepter"],
          `is required when peering across accounts (${appAccount} → ${cpAccount}): set accepter.roleArn to a role in ${cpAccount}`,
        );
      }
    }
  },
  pulumi: {
    environment: () => ({
      build: (
        require("../environment") as {
          awsVpcPeeringEnvironment: EnvironmentBuilder<AwsVpcPeeringConnectorConfig>;
        }
      ).awsVpcPeeringEnvironment,
    }),
    bridge: () => (require("../bridge-program") as { bridgeProgram: GroupProgram }).bridgeProgram,
    provider: () => (require("../provider/surface") as { providerSurface: ProviderSurface }).providerSurface,
  },
};

/** The account of a cluster's AWS settings: its accountId, else the one in its roleArn. */
function awsAccountOf(aws: AwsClusterConfig | undefined): string | undefined {
  return aws?.accountId ?? aws?.roleArn?.split(":")[4];
}
