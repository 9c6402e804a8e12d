import { addressToString, parseCidr } from "../../net/cidr";

/**
 * Subnets of a cluster VPC: one private subnet (nodes, data services) and one public subnet
 * (NAT gateway, load balancers) per availability zone. The private half of the VPC goes to
 * the private subnets because that is where the pods' addresses come from (the VPC CNI gives
 * every pod a VPC address); the public subnets only hold NAT gateways and load balancers, so
 * they get an eighth of the VPC.
 */

export interface SubnetPlan {
  /** Index of the availability zone the subnet lives in. */
  zone: number;
  cidr: string;
  tier: "private" | "public";
}

export interface VpcSubnetPlan {
  private: SubnetPlan[];
  public: SubnetPlan[];
}

/** AWS VPCs range from /16 to /28; EKS needs room for nodes and pods, so /24 is our smallest. */
export const SMALLEST_VPC_PREFIX = 24;
export const LARGEST_VPC_PREFIX = 16;
/** AWS's smallest subnet. */
const SMALLEST_SUBNET_PREFIX = 28;

function bitsFor(count: number): number {
  return Math.ceil(Math.log2(Math.max(count, 1)));
}

/** Why a VPC CIDR cannot hold `zones` zones' subnets, or undefined. */
export function vpcCidrProblem(vpcCidr: string, zones: number): string | undefined {
  const { prefix } = parseCidr(vpcCidr);
  if (prefix < LARGEST_VPC_PREFIX || prefix > SMALLEST_VPC_PREFIX) {
    return `${vpcCidr} cannot be a cluster VPC: AWS allows /16 to /28 and EKS needs at least a /${SMALLEST_VPC_PREFIX}; use a prefix from /${LARGEST_VPC_PREFIX} to /${SMALLEST_VPC_PREFIX}`;
  }
  const publicPrefix = prefix + 3 + bitsFor(zones);
  if (publicPrefix > SMALLEST_SUBNET_PREFIX) {
    return `${vpcCidr} is too small for ${zones} availability zone(s) (public subnets would be /${publicPrefix}, AWS's smallest is /${SMALLEST_SUBNET_PREFIX}); use a larger block or fewer zones`;
  }
  return undefined;
}

function carve(start: bigint, prefix: number, count: number): string[] {
  const size = 1n << BigInt(32 - prefix);
  return Array.from({ length: count }, (_, i) => `${addressToString(start + size * BigInt(i))}/${prefix}`);
}

/** Deterministic: the same CIDR and zone count always give the same subnets. */
export function planVpcSubnets(vpcCidr: string, zones: number): VpcSubnetPlan {
  const problem = vpcCidrProblem(vpcCidr, zones);
  if (problem) throw new Error(problem);
  const vpc = parseCidr(vpcCidr);
  const bits = bitsFor(zones);
  const half = (vpc.last - vpc.first + 1n) / 2n;
  const privates = carve(vpc.first, vpc.prefix + 1 + bits, zones);
  const publics = carve(vpc.first + half, vpc.prefix + 3 + bits, zones);
  return {
    private: privates.map((cidr, zone) => ({ zone, cidr, tier: "private" })),
    public: publics.map((cidr, zone) => ({ zone, cidr, tier: "public" })),
  };
}
