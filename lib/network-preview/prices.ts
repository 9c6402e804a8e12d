/**
 * List prices of the network resources the environment stacks create that cost money by the
 * hour whether traffic flows or not. One data file, each price with where it comes from and
 * when it was read; traffic (per GB) is not estimated. Monthly = hourly × 730, as AWS's own
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
