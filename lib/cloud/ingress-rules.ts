import { cidrProblem, parseCidr } from "../net/cidr";

/**
 * Security group ingress for a routed network path (AWS peering, OpenStack routing): one rule
 * per data-service port and consumer network, TCP only, nothing wider. Both clouds' components
 * register exactly these rules, and the policy pack checks the same properties on whatever a
 * program registers.
 */

export interface IngressRule {
  protocol: "tcp" | "udp";
  port: number;
  /** The only network allowed in: the consumer's (app cluster's) CIDR. */
  cidr: string;
  /** Stable key for resource names, e.g. `tcp-5432-10-20-0-0-16`. */
  key: string;
}

export const WORLD_CIDRS = ["0.0.0.0/0", "::/0"] as const;

export class IngressPlanError extends Error {
  constructor(public readonly problems: string[]) {
    super(`security group ingress: ${problems.length} problem(s)\n  - ${problems.join("\n  - ")}`);
    this.name = "IngressPlanError";
  }
}

export function ruleKey(protocol: string, port: number, cidr: string): string {
  return `${protocol}-${port}-${cidr.replace(/[./]/g, "-")}`;
}

/**
 * Plans the rules; rejects a world-open or malformed source before anything is registered.
 * `protocol` is udp only for a WireGuard listener; data services are TCP.
 */
export function planIngressRules(
  ports: readonly number[],
  consumerCidrs: readonly string[],
  protocol: "tcp" | "udp" = "tcp",
): IngressRule[] {
  const problems: string[] = [];
  if (ports.length === 0) problems.push("no ports: a path must open at least one data-service port");
  if (consumerCidrs.length === 0) problems.push("no consumer CIDR: name the app cluster's network");
  for (const port of ports) {
    if (!Number.isInteger(port) || port < 1 || port > 65535) problems.push(`port ${port} is not 1-65535`);
  }
  for (const cidr of consumerCidrs) {
    const problem = cidrProblem(cidr);
    if (problem) problems.push(`consumer CIDR ${cidr} ${problem}`);
    else if (parseCidr(cidr).prefix < 8) {
      problems.push(
        `consumer CIDR ${cidr} opens the data services to ${cidr === "0.0.0.0/0" ? "the whole internet" : "a huge range"}; use the app cluster's own CIDR`,
      );
    }
  }
  if (problems.length > 0) throw new IngressPlanError(problems);
  const rules = new Map<string, IngressRule>();
  for (const port of [...ports].sort((a, b) => a - b)) {
    for (const cidr of consumerCidrs) {
      const key = ruleKey(protocol, port, cidr);
      rules.set(key, { protocol, port, cidr, key });
    }
  }
  return [...rules.values()];
}
