import type { ComponentSpec, ObjectType, Prop } from "../../../providers/kit/schema-model";
import {
  CONNECTOR_DATA_SERVICE_PORTS,
  DATA_SERVICE_PORTS,
  bool,
  ref,
  str,
} from "../../../providers/kit/props";

/**
 * The OpenStack router path as the klutch provider serves it (routed-path.ts). Each side's
 * provider is made from its region; credentials come from the environment as OpenStack's own
 * tools read them (OS_* or clouds.yaml), never from inputs.
 */
export const openstackTypes: Record<string, ObjectType> = {
  "klutch:network:OpenstackNetwork": {
    description: "An OpenStack network of a routed path: its subnet and router.",
    properties: {
      region: str("OpenStack region; the cloud's default when omitted."),
      cidr: str("The subnet's CIDR."),
      networkId: str("Network id."),
      subnetId: str("Subnet id."),
      routerId: str("Router id."),
    },
    required: ["cidr", "networkId", "subnetId", "routerId"],
  },
};

export const openstackComponents: ComponentSpec[] = [
  {
    token: "klutch:network:OpenstackRoutedPath",
    description:
      "The OpenStack network path: the data-service router gets a port in the app subnet (a fixed address kept out of its pool), the app router routes the data-service CIDR to it, and a security group admits only the data-service ports from the app subnet. Tested with mocks only (no OpenStack here).",
    inputs: {
      app: ref("klutch:network:OpenstackNetwork", "The app cluster's network (the consumer)."),
      dataService: ref("klutch:network:OpenstackNetwork", "The data-service network."),
      dataServiceCidr: str("The CIDR data services live in; the data-service network's when omitted.", {
        plain: true,
      }),
      dataServicePorts: DATA_SERVICE_PORTS,
      appLabel: str("Names the app cluster in descriptions. Default app cluster.", { plain: true }),
    },
    requiredInputs: ["app", "dataService"],
    outputs: { securityGroupId: str("Attach this group to the data-service instances.") },
    requiredOutputs: ["securityGroupId"],
  },
];

/** Its `networkConnector` settings (model/config.ts), as the environment's NetworkConnector type shows them. */
export const openstackConnectorFields: Record<string, Prop> = {
  dataServicePorts: CONNECTOR_DATA_SERVICE_PORTS,
  floatingIp: bool("also give the proxy a floating IP. Default true."),
};
