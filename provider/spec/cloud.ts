import type { ComponentSpec, ObjectType } from "./schema-model";
import { bool, int, list, map, ref, str } from "./props";

/**
 * The routed network paths on clouds as the provider serves them: AWS VPC peering
 * (network/aws-vpc-peering/vpc-peering.ts) and the OpenStack router path
 * (network/openstack/routed-path.ts). Each side's cloud provider is made from its region (and,
 * on AWS, account and role); credentials come from the environment as the clouds' own tools read
 * them (AWS_* or a profile; OS_* or clouds.yaml), never from inputs.
 */

export const cloudTypes: Record<string, ObjectType> = {
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

const PORTS = list(
  int("port"),
  "TCP ports of the data services, opened to the app side's CIDRs only. Default [5432].",
  true,
);

export const cloudComponents: ComponentSpec[] = [
  {
    token: "klutch:network:VpcPeering",
    description:
      "The AWS VPC peering network path: a peering requested from the app cluster's VPC and accepted in the data-service VPC (by the accepter's own role across accounts), DNS resolution across it, routes on both sides, and a security group admitting only the data-service ports from the app side. Tested with mocks only (no AWS here).",
    inputs: {
      requester: ref("klutch:network:PeeringSide", "The app cluster's VPC: it requests the peering."),
      accepter: ref("klutch:network:PeeringSide", "The data-service VPC: it accepts."),
      accepterRoleArn: str("The accepter account's role, required across accounts.", { plain: true }),
      dataServicePorts: PORTS,
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
      dataServicePorts: PORTS,
      appLabel: str("Names the app cluster in descriptions. Default app cluster.", { plain: true }),
    },
    requiredInputs: ["app", "dataService"],
    outputs: { securityGroupId: str("Attach this group to the data-service instances.") },
    requiredOutputs: ["securityGroupId"],
  },
];
