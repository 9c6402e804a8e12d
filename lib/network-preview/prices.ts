/**
 * List prices of the network resources the environment stacks create that cost money by the
 * hour whether traffic flows or not (LIST_PRICES), and of what they charge per GB that flows
 * through them (TRAFFIC_PRICES). One data file, each price with where it comes from and when it
 * was read. Monthly = hourly × 730, as AWS's own
 * calculator counts a month. These are list prices of one region or one operator: replace
 * them with your own contract's before you budget with them.
 */

export interface ListPrice {
  /** The Pulumi resource type the price applies to. */
  type: string;
  /** What is billed, in words. */
  what: string;
  usdPerHour: number;
  source: string;
  /** When the price was read from the source. */
  asOf: string;
}

export const HOURS_PER_MONTH = 730;

export const LIST_PRICES: readonly ListPrice[] = [
  {
    type: "aws:ec2/natGateway:NatGateway",
    what: "NAT gateway-hour, us-east-1 (data processing per GB not included)",
    usdPerHour: 0.045,
    source: "https://aws.amazon.com/vpc/pricing/ (NAT gateway pricing, US East)",
    asOf: "2026-11-23",
  },
  {
    type: "aws:ec2/eip:Eip",
    what: "public IPv4 address-hour, in use or idle (since 2024-02-01)",
    usdPerHour: 0.005,
    source: "https://aws.amazon.com/vpc/pricing/ (Public IPv4 address)",
    asOf: "2026-11-23",
  },
  {
    type: "aws:lb/loadBalancer:LoadBalancer",
    what: "Network Load Balancer-hour, us-east-1 (LCU-hours not included)",
    usdPerHour: 0.0225,
    source: "https://aws.amazon.com/elasticloadbalancing/pricing/ (Network Load Balancer, US East)",
    asOf: "2026-11-23",
  },
  {
    type: "openstack:networking/floatingIp:FloatingIp",
    // OpenStack has no one list price: this is one public operator's, as an example.
    what: "floating IP (public IPv4) hour at one public OpenStack operator ($2.00/month)",
    usdPerHour: 2 / HOURS_PER_MONTH,
    source: "https://open-edge.io/?p=198 (Pricing: Public IPv4 Address, aka OpenStack Floating IPs)",
    asOf: "2026-11-23",
  },
  {
    type: "openstack:loadbalancer/loadBalancer:LoadBalancer",
    what: "Octavia load balancer-hour, default flavour, at one public OpenStack operator",
    usdPerHour: 0.025,
    source: "https://monal.cloud/pricing/ (octavia.lb_hour.default, price snapshot 2026-04-22)",
    asOf: "2026-11-23",
  },
];

/** A price per GB of traffic through a resource, on top of its hourly price (if any). */
export interface TrafficPrice {
  type: string;
  what: string;
  usdPerGb: number;
  source: string;
  asOf: string;
}

export const TRAFFIC_PRICES: readonly TrafficPrice[] = [
  {
    type: "aws:ec2/natGateway:NatGateway",
    what: "NAT gateway data processing, per GB through it, us-east-1 (data transfer out billed on top)",
    usdPerGb: 0.045,
    source:
      "https://aws.amazon.com/vpc/pricing/ (NAT gateway pricing, US East: $0.045 per GB data processed)",
    asOf: "2026-11-25",
  },
  {
    type: "aws:ec2/vpcPeeringConnection:VpcPeeringConnection",
    // Klutch's consumers and instances may sit in different AZs; within one AZ it is free.
    what: "data transfer over the peering across Availability Zones, per GB in each direction (free within one AZ)",
    usdPerGb: 0.01,
    source:
      "https://aws.amazon.com/vpc/pricing/ (VPC peering: data transfer within an AZ free, across AZs $0.01/GB each way)",
    asOf: "2026-11-25",
  },
  {
    type: "aws:lb/loadBalancer:LoadBalancer",
    // An NLCU is 1 GB processed per hour for TCP, or connections, whichever is more: bytes usually.
    what: "Network Load Balancer capacity units, as GB processed (1 NLCU-hour = 1 GB of TCP), us-east-1",
    usdPerGb: 0.006,
    source:
      "https://aws.amazon.com/elasticloadbalancing/pricing/ (NLCU: $0.006 per hour, 1 GB/hour processed for TCP)",
    asOf: "2026-11-25",
  },
];
