import type { ComponentSpec, ObjectType, Prop } from "../../../providers/kit/schema-model";
import {
  CONNECTOR_DATA_SERVICE_PORTS,
  DATA_SERVICE_PORTS,
  bool,
  int,
  list,
  map,
  ref,
  str,
} from "../../../providers/kit/props";

/**
 * The AWS VPC peering path as the klutch provider serves it (vpc-peering.ts). Each side's AWS
 * provider is made from its region, account and role; credentials come from the environment as
 * AWS's own tools read them (AWS_* or a profile), never from inputs.
 */
export const awsVpcPeeringTypes: Record<string, ObjectType> = {
  "klutch:index:PeeringAccepter": {
    description: "The accepter side's credentials of an awsVpcPeering connector.",
    properties: { roleArn: str("A role in the data-service account.") },
    required: ["roleArn"],
  },
  "klutch:network:RouteTable": {
    description: "A route table of a VPC side; the name keys its routes (it must be known before creation).",
    properties: {
      name: str("Stable name of the table, e.g. private-0."),
      id: str("Route table id (rtb-...)."),
    },
    required: ["name", "id"],
  },
  "klutch:network:PeeringSide": {
    description: "One VPC of a peering: where it is, what it routes, and the account it lives in.",
    properties: {
      label: str("Names this side in problems and descriptions. Default requester / accepter."),
      region: str("AWS region, e.g. eu-central-1."),
      accountId: str("12-digit AWS account id; tells a cross-account peering."),
      roleArn: str("Role the side's AWS provider assumes (its account's credentials)."),
      vpcId: str("VPC id (vpc-...)."),
      cidrs: list(str("CIDR"), "The VPC's CIDR blocks; the other side routes to each."),
      routeTables: list(
        ref("klutch:network:RouteTable", "table"),
        "Route tables that get a route per peer CIDR.",
      ),
    },
    required: ["region", "vpcId", "cidrs", "routeTables"],
  },
  "klutch:network:PeeringConnection": {
    description: "An XTCPConnection served over the peering (its port is opened too).",
    properties: {
      name: str("The connection's name."),
      port: int("spec.port."),
      enhancements: list(
        map(str("value"), "entry"),
        "spec.enhancements; an {ConnectionType: awsVPCPeering} entry must name these VPCs.",
      ),
    },
    required: ["name", "port"],
  },
  "klutch:network:PeeringEndpoint": {
    description: "What a peered connection's status reports (peering keeps host and port).",
    properties: { port: int("Port consumers dial (the instance's own).") },
    required: ["port"],
  },
};

export const awsVpcPeeringComponents: ComponentSpec[] = [
  {
    token: "klutch:network:VpcPeering",
    description:
      "The AWS VPC peering network path: a peering requested from the app cluster's VPC and accepted in the data-service VPC (by the accepter's own role across accounts), DNS resolution across it, routes on both sides, and a security group admitting only the data-service ports from the app side. Tested with mocks only (no AWS here).",
    inputs: {
      requester: ref("klutch:network:PeeringSide", "The app cluster's VPC: it requests the peering."),
      accepter: ref("klutch:network:PeeringSide", "The data-service VPC: it accepts."),
      accepterRoleArn: str("The accepter account's role, required across accounts.", { plain: true }),
      dataServicePorts: DATA_SERVICE_PORTS,
      connections: list(
        ref("klutch:network:PeeringConnection", "connection"),
        "XTCPConnections served.",
        true,
      ),
      dnsResolution: bool("Resolve the peer's private DNS names to private addresses. Default true.", true),
      tags: map(str("value"), "Tags of every AWS resource.", true),
    },
    requiredInputs: ["requester", "accepter"],
    outputs: {
      peeringConnectionId: str("The peering connection's id."),
      securityGroupId: str("Attach this group to the data-service instances."),
      endpoints: map(
        ref("klutch:network:PeeringEndpoint", "endpoint"),
        "Per connection: what its status reports.",
      ),
    },
    requiredOutputs: ["peeringConnectionId", "securityGroupId", "endpoints"],
  },
];

/** Its `networkConnector` settings (model/config.ts), as the environment's NetworkConnector type shows them. */
export const awsVpcPeeringConnectorFields: Record<string, Prop> = {
  accepter: ref("klutch:index:PeeringAccepter", "the accepter's role, across accounts."),
  dataServicePorts: CONNECTOR_DATA_SERVICE_PORTS,
};
