import { cidrProblem, cidrsOverlap } from "../../../lib/net/cidr";
import { IngressRule, planIngressRules } from "../../../lib/cloud/ingress-rules";

/**
 * VPC peering between an app cluster's VPC (requester) and the data-service VPC (accepter),
 * planned without Pulumi: which routes each side needs, which ingress rules the accepter's
 * data-service security group gets, and whether the peering crosses accounts or regions.
 */

export interface PeeringSideInput {
  /** Where errors point, e.g. `klutch:appClusters[0]`. */
  label: string;
  /** Known VPC id (adopted VPCs); undefined while the VPC is still to be created. */
  vpcId?: string;
  /** The side's VPC CIDR blocks; the other side routes to each of them. */
  cidrs: readonly string[];
  /** Keys of the side's route tables; one route per table per peer CIDR. */
  routeTables: readonly string[];
  region: string;
  accountId?: string;
}

/** `spec.enhancements[]` entries of an XTCPConnection; only awsVPCPeering is read here. */
export type Enhancement = Readonly<Record<string, unknown>>;

export interface PeeringConnectionInput {
  name: string;
  port: number;
  enhancements?: readonly Enhancement[];
}

export interface PeeringPlanInput {
  requester: PeeringSideInput;
  accepter: PeeringSideInput;
  dataServicePorts: readonly number[];
  /** XTCPConnections this path serves; their ports are opened too. */
  connections?: readonly PeeringConnectionInput[];
  /** The accepter's credentials (a role in its account); required across accounts. */
  accepterRoleArn?: string;
}

export interface PlannedRoute {
  side: "requester" | "accepter";
  routeTable: string;
  destinationCidr: string;
  /** Stable resource-name suffix. */
  key: string;
}

export interface PeeringPlan {
  crossAccount: boolean;
  crossRegion: boolean;
  /** Auto-accept works only inside one account and region; otherwise an accepter resource accepts. */
  autoAccept: boolean;
  routes: PlannedRoute[];
  ingress: IngressRule[];
  /** Connection name → the VPC pair it uses (from its awsVPCPeering enhancement or the defaults). */
  connections: { name: string; port: number; instanceVPC?: string; appClusterVPC?: string }[];
}

export class PeeringPlanError extends Error {
  constructor(public readonly problems: string[]) {
    super(`AWS VPC peering: ${problems.length} problem(s)\n  - ${problems.join("\n  - ")}`);
    this.name = "PeeringPlanError";
  }
}

const cidrKey = (cidr: string) => cidr.replace(/[./]/g, "-");

function awsPeeringHint(enhancements: readonly Enhancement[] | undefined): Enhancement | undefined {
  return enhancements?.find((e) => e.ConnectionType === "awsVPCPeering");
}

/** Every problem at once: CIDRs, overlaps, credentials, enhancement hints that name other VPCs. */
export function checkPeering(input: PeeringPlanInput): string[] {
  const problems: string[] = [];
  const { requester, accepter } = input;
  for (const side of [requester, accepter]) {
    if (side.cidrs.length === 0) problems.push(`${side.label}: no VPC CIDR to route to`);
    for (const cidr of side.cidrs) {
      const p = cidrProblem(cidr);
      if (p) problems.push(`${side.label}: CIDR ${cidr} ${p}`);
    }
  }
  if (problems.length > 0) return problems;
  for (const a of requester.cidrs) {
    for (const b of accepter.cidrs) {
      if (cidrsOverlap(a, b)) {
        problems.push(
          `${requester.label}.network.nodeCidr ${a} overlaps ${accepter.label}.network.nodeCidr ${b}; peered VPCs need disjoint CIDRs (AWS rejects the peering and routes would be ambiguous)`,
        );
      }
    }
  }
  const crossAccount =
    !!requester.accountId && !!accepter.accountId && requester.accountId !== accepter.accountId;
  if (crossAccount && !input.accepterRoleArn) {
    problems.push(
      `networkConnector.accepter: peering ${requester.accountId} → ${accepter.accountId} crosses accounts, so the accepter needs its own credentials; set accepter.roleArn to a role in ${accepter.accountId}`,
    );
  }
  if (requester.vpcId && accepter.vpcId && requester.vpcId === accepter.vpcId) {
    problems.push(
      `${requester.label} and ${accepter.label} are in the same VPC ${requester.vpcId}; no peering needed (use noop)`,
    );
  }
  for (const conn of input.connections ?? []) {
    const hint = awsPeeringHint(conn.enhancements);
    if (!hint) continue;
    const pairs: [string, PeeringSideInput][] = [
      ["instanceVPC", accepter],
      ["appClusterVPC", requester],
    ];
    for (const [field, side] of pairs) {
      const named = hint[field];
      if (typeof named !== "string" || !/^vpc-[0-9a-f]+$/.test(named)) {
        problems.push(
          `connection ${conn.name}: enhancement awsVPCPeering.${field} must be a VPC id (got ${JSON.stringify(named)})`,
        );
      } else if (side.vpcId && named !== side.vpcId) {
        problems.push(
          `connection ${conn.name}: enhancement awsVPCPeering.${field} names ${named}, but this path peers ${side.label}'s VPC ${side.vpcId}; fix the enhancement or use the path of that VPC`,
        );
      }
    }
  }
  return problems;
}

export function planPeering(input: PeeringPlanInput): PeeringPlan {
  const problems = checkPeering(input);
  if (problems.length > 0) throw new PeeringPlanError(problems);
  const { requester, accepter } = input;
  const crossAccount =
    !!requester.accountId && !!accepter.accountId && requester.accountId !== accepter.accountId;
  const crossRegion = requester.region !== accepter.region;

  const routes: PlannedRoute[] = [];
  const sides: ["requester" | "accepter", PeeringSideInput, PeeringSideInput][] = [
    ["requester", requester, accepter],
    ["accepter", accepter, requester],
  ];
  for (const [side, own, peer] of sides) {
    for (const routeTable of own.routeTables) {
      for (const destinationCidr of peer.cidrs) {
        routes.push({
          side,
          routeTable,
          destinationCidr,
          key: `${side}-${routeTable}-${cidrKey(destinationCidr)}`,
        });
      }
    }
  }
  const connections = (input.connections ?? []).map((c) => {
    const hint = awsPeeringHint(c.enhancements);
    return {
      name: c.name,
      port: c.port,
      ...(hint
        ? { instanceVPC: hint.instanceVPC as string, appClusterVPC: hint.appClusterVPC as string }
        : {}),
    };
  });
  const ports = [...new Set([...input.dataServicePorts, ...connections.map((c) => c.port)])];
  return {
    crossAccount,
    crossRegion,
    autoAccept: !crossAccount && !crossRegion,
    routes,
    ingress: planIngressRules(ports, requester.cidrs),
    connections,
  };
}
