import { z } from "zod";
import { dataServicePorts } from "../../lib/config/fields";
import type { ImplementationSpec } from "../implementation";
import { checkRoutedPair } from "../routed/checks";

/** OpenStack routing's settings in an app cluster's `networkConnector`. */
export const openstackConnector = z
  .object({
    implementation: z.literal("openstack"),
    dataServicePorts,
    /** Also give the proxy a floating IP. */
    floatingIp: z.boolean().default(true),
  })
  .strict();

export type OpenstackConnectorConfig = z.output<typeof openstackConnector>;

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
};
