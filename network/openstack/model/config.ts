import { z } from "zod";
import { dataServicePorts } from "../../../lib/config/fields";

/** OpenStack routing's settings in an app cluster's `networkConnector`. */
export const openstackConnector = z
  .object({
    implementation: z.literal("openstack"),
    dataServicePorts,
    /** Also give the proxy a floating IP. */
    floatingIp: z.boolean().prefault(true),
  })
  .strict();

export type OpenstackConnectorConfig = z.output<typeof openstackConnector>;
