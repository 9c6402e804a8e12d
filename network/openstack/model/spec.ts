/* eslint-disable @typescript-eslint/no-require-imports -- the Pulumi side, loaded when asked (implementation.ts) */
import type { GroupProgram } from "../../contract/bridge-target";
import type { ProviderSurface } from "../../contract/provider-surface";
import type { EnvironmentBuilder } from "../../contract/environment-context";
import type { OpenstackConnectorConfig } from "./config";
import type { ImplementationSpec } from "../../contract/implementation";
import { checkRoutedPair } from "../../contract/routed-checks";
import { openstackConnector } from "./config";

/** The implementation as the registry (network/registry.ts) lists it. */
export const openstack: ImplementationSpec<"openstack", typeof openstackConnector> = {
  name: "openstack",
  realisation: "routed",
  summary:
    "a router between the app cluster's and the data-service subnets, with security group rules for the data-service ports",
  schema: openstackConnector,
  check({ users, controlPlane, add }) {
    if (!controlPlane) return;
    for (const app of users) checkRoutedPair(app, controlPlane, "openstack", "openstack", add);
  },
  pulumi: {
    environment: () => ({
      build: (
        require("../environment") as { openstackEnvironment: EnvironmentBuilder<OpenstackConnectorConfig> }
      ).openstackEnvironment,
    }),
    bridge: () => (require("../bridge-program") as { bridgeProgram: GroupProgram }).bridgeProgram,
    provider: () => (require("../provider/surface") as { providerSurface: ProviderSurface }).providerSurface,
  },
};
