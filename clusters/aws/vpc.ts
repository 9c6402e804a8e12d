import * as aws from "@pulumi/aws";
import * as pulumi from "@pulumi/pulumi";
import { pickAvailabilityZones } from "../../lib/cloud/aws/regions";
import { planVpcSubnets } from "../../lib/cloud/aws/subnets";

/** A route table, by a stable key (for resource names) and its id. */
export interface RouteTableRef {
  key: string;
  id: pulumi.Input<string>;
}

export interface ClusterVpcArgs {
  /** The VPC's CIDR (network.nodeCidr). */
  cidr: string;
  region: string;
  availabilityZoneCount: number;
  /** Provider of the cluster's account and region. */
  provider: aws.Provider;
  /** Name of the EKS cluster; subnets carry its discovery tags for load balancers. */
  clusterName: string;
  tags?: Record<string, string>;
  /** Adopt this VPC instead of creating one. */
  existing?: { vpcId: string; routeTableIds: string[]; subnetIds: string[] };
}

/**
 * A cluster's VPC: per availability zone a private subnet (nodes and pods) and a public
 * subnet (NAT, load balancers), an internet gateway and one NAT gateway (in the first zone:
 * one NAT costs a third of three, and node egress is light; a zone outage stops egress but not
 * the data paths, which stay inside the VPC or go over peering). One route table per private
 * subnet, so each zone can later get its own NAT without changing the peering routes.
 */
export class ClusterVpc extends pulumi.ComponentResource {
  public readonly vpcId: pulumi.Output<string>;
  public readonly cidr: string;
  public readonly privateSubnetIds: pulumi.Output<string>[];
  public readonly publicSubnetIds: pulumi.Output<string>[];
  /** Every route table of the VPC that peering routes go into; the count is known before any id. */
  public readonly routeTables: RouteTableRef[];

  constructor(name: string, args: ClusterVpcArgs, opts?: pulumi.ComponentResourceOptions) {
    super("klutch:aws:ClusterVpc", name, {}, opts);
    this.cidr = args.cidr;
    if (args.existing) {
      const e = args.existing;
      this.vpcId = pulumi.output(e.vpcId);
      this.privateSubnetIds = e.subnetIds.map((s) => pulumi.output(s));
      this.publicSubnetIds = [];
      this.routeTables = e.routeTableIds.map((id) => ({ key: id, id }));
      this.registerOutputs({ vpcId: this.vpcId });
      return;
    }

    const plan = planVpcSubnets(args.cidr, args.availabilityZoneCount);
    const opt = { parent: this, provider: args.provider };
    const tags = (extra: Record<string, string>) => ({ ...args.tags, ...extra });
    const zones = aws
      .getAvailabilityZonesOutput({ state: "available" }, opt)
      .apply((z) => pickAvailabilityZones(args.region, z.names, args.availabilityZoneCount));

    const vpc = new aws.ec2.Vpc(
      `${name}-vpc`,
      {
        cidrBlock: args.cidr,
        // EKS and peered DNS resolution both need these.
        enableDnsSupport: true,
        enableDnsHostnames: true,
        tags: tags({ Name: `${name}-vpc` }),
      },
      opt,
    );
    this.vpcId = vpc.id;
    const clusterTag = `kubernetes.io/cluster/${args.clusterName}`;
    const igw = new aws.ec2.InternetGateway(
      `${name}-igw`,
      { vpcId: vpc.id, tags: tags({ Name: `${name}-igw` }) },
      opt,
    );

    const publicSubnets = plan.public.map(
      (s) =>
        new aws.ec2.Subnet(
          `${name}-public-${s.zone}`,
          {
            vpcId: vpc.id,
            cidrBlock: s.cidr,
            availabilityZone: zones.apply((z) => z[s.zone] as string),
            tags: tags({
              Name: `${name}-public-${s.zone}`,
              [clusterTag]: "shared",
              "kubernetes.io/role/elb": "1",
            }),
          },
          opt,
        ),
    );
    const privateSubnets = plan.private.map(
      (s) =>
        new aws.ec2.Subnet(
          `${name}-private-${s.zone}`,
          {
            vpcId: vpc.id,
            cidrBlock: s.cidr,
            availabilityZone: zones.apply((z) => z[s.zone] as string),
            tags: tags({
              Name: `${name}-private-${s.zone}`,
              [clusterTag]: "shared",
              "kubernetes.io/role/internal-elb": "1",
            }),
          },
          opt,
        ),
    );
    this.publicSubnetIds = publicSubnets.map((s) => s.id);
    this.privateSubnetIds = privateSubnets.map((s) => s.id);

    const publicRt = new aws.ec2.RouteTable(
      `${name}-public-rt`,
      { vpcId: vpc.id, tags: tags({ Name: `${name}-public-rt` }) },
      opt,
    );
    new aws.ec2.Route(
      `${name}-public-default`,
      { routeTableId: publicRt.id, destinationCidrBlock: "0.0.0.0/0", gatewayId: igw.id },
      opt,
    );
    publicSubnets.forEach(
      (s, i) =>
        new aws.ec2.RouteTableAssociation(
          `${name}-public-${i}-rta`,
          { subnetId: s.id, routeTableId: publicRt.id },
          opt,
        ),
    );

    const eip = new aws.ec2.Eip(
      `${name}-nat-eip`,
      { domain: "vpc", tags: tags({ Name: `${name}-nat` }) },
      opt,
    );
    const firstPublic = publicSubnets[0];
    if (!firstPublic) throw new Error("ClusterVpc: availabilityZoneCount must be at least 1");
    const nat = new aws.ec2.NatGateway(
      `${name}-nat`,
      { allocationId: eip.id, subnetId: firstPublic.id, tags: tags({ Name: `${name}-nat` }) },
      { ...opt, dependsOn: [igw] },
    );
    const privateRts = privateSubnets.map((s, i) => {
      const rt = new aws.ec2.RouteTable(
        `${name}-private-${i}-rt`,
        { vpcId: vpc.id, tags: tags({ Name: `${name}-private-${i}-rt` }) },
        opt,
      );
      new aws.ec2.Route(
        `${name}-private-${i}-default`,
        { routeTableId: rt.id, destinationCidrBlock: "0.0.0.0/0", natGatewayId: nat.id },
        opt,
      );
      new aws.ec2.RouteTableAssociation(
        `${name}-private-${i}-rta`,
        { subnetId: s.id, routeTableId: rt.id },
        opt,
      );
      return rt;
    });
    this.routeTables = [
      { key: "public", id: publicRt.id },
      ...privateRts.map((rt, i) => ({ key: `private-${i}`, id: rt.id })),
    ];
    this.registerOutputs({
      vpcId: this.vpcId,
      privateSubnetIds: this.privateSubnetIds,
      publicSubnetIds: this.publicSubnetIds,
    });
  }
}
