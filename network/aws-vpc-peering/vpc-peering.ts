import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import { PeeringConnectionInput, planPeering } from "./model/peering-plan";
import { RouteTableRef } from "../../clusters/aws/vpc";

export interface VpcPeeringSide {
  /** Where errors point, e.g. `klutch:appClusters[0]`. */
  label: string;
  /** Provider of this side's account and region (the accepter's is replaced by one assuming accepterRoleArn). */
  provider: aws.Provider;
  vpcId: pulumi.Input<string>;
  /** The VPC id when known before deployment; lets enhancement hints be checked up front. */
  knownVpcId?: string;
  cidrs: string[];
  routeTables: RouteTableRef[];
  region: string;
  accountId?: string;
}

export interface VpcPeeringArgs {
  /** The app cluster's VPC: it requests the peering. */
  requester: VpcPeeringSide;
  /** The data-service VPC: it accepts, with its own provider (credentials or assumed role). */
  accepter: VpcPeeringSide;
  /** The accepter's role, required across accounts: accepter-side resources use a provider assuming it. */
  accepterRoleArn?: string;
  /** TCP ports of the data services; each is opened to the requester's CIDRs only. */
  dataServicePorts: number[];
  /** XTCPConnections served by this path; an `awsVPCPeering` enhancement must name these VPCs. */
  connections?: PeeringConnectionInput[];
  /** Resolve the peer's private DNS names to private addresses (default true). */
  dnsResolution?: boolean;
  tags?: Record<string, string>;
}

/**
 * The AWS VPC peering network path: a peering connection requested from the app cluster's
 * VPC, accepted in the data-service VPC (by the accepter's own provider when accounts or
 * regions differ), DNS resolution across it, one route per route table per peer CIDR on both
 * sides, and a data-service security group that admits only the data-service ports from the
 * app cluster's CIDR. All checks happen in the pure planner before anything is registered.
 */
export class VpcPeering extends pulumi.ComponentResource {
  public readonly peeringConnectionId: pulumi.Output<string>;
  /** Attach this group to the data-service instances. */
  public readonly securityGroupId: pulumi.Output<string>;
  /** Per connection: what its XTCPConnection status reports (peering keeps host and port). */
  public readonly endpoints: Record<string, { port: number }>;

  constructor(name: string, args: VpcPeeringArgs, opts?: pulumi.ComponentResourceOptions) {
    // Checked before super(): bad input registers nothing, not even this component.
    const { requester: req, accepter: acc } = args;
    const plan = planPeering({
      requester: { ...req, vpcId: req.knownVpcId, routeTables: req.routeTables.map((r) => r.key) },
      accepter: { ...acc, vpcId: acc.knownVpcId, routeTables: acc.routeTables.map((r) => r.key) },
      dataServicePorts: args.dataServicePorts,
      connections: args.connections,
      accepterRoleArn: args.accepterRoleArn,
    });
    super("klutch:network:VpcPeering", name, {}, opts);
    const reqOpts = { parent: this, provider: req.provider };
    // Across accounts the accepter acts with its own role: a provider of its own, in its region.
    const accepterProvider = args.accepterRoleArn
      ? new aws.Provider(
          `${name}-accepter-aws`,
          {
            region: acc.region,
            ...(acc.accountId ? { allowedAccountIds: [acc.accountId] } : {}),
            assumeRoles: [
              { roleArn: args.accepterRoleArn, sessionName: `klutch-peering-${name}`.slice(0, 64) },
            ],
          },
          { parent: this },
        )
      : acc.provider;
    const accOpts = { parent: this, provider: accepterProvider };
    const tags = { ...args.tags, Name: name };
    const dns = args.dnsResolution ?? true;

    const peering = new aws.ec2.VpcPeeringConnection(
      `${name}-peering`,
      {
        vpcId: req.vpcId,
        peerVpcId: acc.vpcId,
        ...(plan.crossAccount ? { peerOwnerId: acc.accountId } : {}),
        ...(plan.crossRegion ? { peerRegion: acc.region } : {}),
        autoAccept: plan.autoAccept,
        tags,
      },
      reqOpts,
    );
    let active: pulumi.Resource = peering;
    if (!plan.autoAccept) {
      active = new aws.ec2.VpcPeeringConnectionAccepter(
        `${name}-accepter`,
        { vpcPeeringConnectionId: peering.id, autoAccept: true, tags },
        accOpts,
      );
    }
    // DNS options can only be set once the peering is active, and each side only by its owner.
    if (plan.autoAccept) {
      new aws.ec2.PeeringConnectionOptions(
        `${name}-dns`,
        {
          vpcPeeringConnectionId: peering.id,
          requester: { allowRemoteVpcDnsResolution: dns },
          accepter: { allowRemoteVpcDnsResolution: dns },
        },
        { ...reqOpts, dependsOn: [active] },
      );
    } else {
      new aws.ec2.PeeringConnectionOptions(
        `${name}-requester-dns`,
        { vpcPeeringConnectionId: peering.id, requester: { allowRemoteVpcDnsResolution: dns } },
        { ...reqOpts, dependsOn: [active] },
      );
      new aws.ec2.PeeringConnectionOptions(
        `${name}-accepter-dns`,
        { vpcPeeringConnectionId: peering.id, accepter: { allowRemoteVpcDnsResolution: dns } },
        { ...accOpts, dependsOn: [active] },
      );
    }

    const tables = {
      requester: new Map(req.routeTables.map((r) => [r.key, r.id])),
      accepter: new Map(acc.routeTables.map((r) => [r.key, r.id])),
    };
    for (const route of plan.routes) {
      new aws.ec2.Route(
        `${name}-${route.key}`,
        {
          routeTableId: tables[route.side].get(route.routeTable) as pulumi.Input<string>,
          destinationCidrBlock: route.destinationCidr,
          vpcPeeringConnectionId: peering.id,
        },
        { ...(route.side === "requester" ? reqOpts : accOpts), dependsOn: [active] },
      );
    }

    const group = new aws.ec2.SecurityGroup(
      `${name}-data-services`,
      {
        vpcId: acc.vpcId,
        description: `Klutch data services reachable from ${req.label} over VPC peering`,
        tags,
      },
      accOpts,
    );
    for (const rule of plan.ingress) {
      new aws.vpc.SecurityGroupIngressRule(
        `${name}-${rule.key}`,
        {
          securityGroupId: group.id,
          ipProtocol: rule.protocol,
          fromPort: rule.port,
          toPort: rule.port,
          cidrIpv4: rule.cidr,
          description: `data-service port ${rule.port} from ${req.label}`,
        },
        accOpts,
      );
    }
    this.peeringConnectionId = peering.id;
    this.securityGroupId = group.id;
    this.endpoints = Object.fromEntries(plan.connections.map((c) => [c.name, { port: c.port }]));
    this.registerOutputs({
      peeringConnectionId: this.peeringConnectionId,
      securityGroupId: this.securityGroupId,
    });
  }
}
