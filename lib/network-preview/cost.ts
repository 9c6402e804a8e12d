import { HOURS_PER_MONTH, LIST_PRICES, type ListPrice } from "./prices";
import type { CostReport, Operation } from "./schema";

/** One changed resource of the environment stack, as the cost estimate needs it. */
export interface CostStep {
  urn: string;
  type: string;
  op: Operation;
  /** The planned inputs, to tell a LoadBalancer Service from other Services. */
  newInputs?: Record<string, unknown>;
  oldInputs?: Record<string, unknown>;
}

const cents = (n: number) => Math.round(n * 100) / 100;

/** +1 for a resource that starts costing, −1 for one that stops, 0 otherwise (a replacement costs the same). */
function sign(op: Operation): number {
  if (op === "create") return 1;
  if (op === "delete") return -1;
  return 0;
}

const isLoadBalancerService = (s: CostStep): boolean => {
  if (s.type !== "kubernetes:core/v1:Service") return false;
  const spec = ((s.op === "delete" ? s.oldInputs : s.newInputs)?.spec ?? {}) as { type?: unknown };
  return spec.type === "LoadBalancer";
};

/**
 * The monthly delta of what has a list price (NAT gateways, public IPs, load balancers): an
 * estimate from lib/network-preview/prices.ts, never a bill. A Kubernetes LoadBalancer
 * Service is listed as unpriced: its price is its cluster's cloud's, which the step does not say.
 */
export function estimateCost(
  steps: readonly CostStep[],
  prices: readonly ListPrice[] = LIST_PRICES,
): CostReport {
  const items: CostReport["items"] = [];
  const unpriced: CostReport["unpriced"] = [];
  for (const s of steps) {
    const k = sign(s.op);
    if (k === 0) continue;
    const price = prices.find((p) => p.type === s.type);
    if (price) {
      items.push({
        urn: s.urn,
        type: s.type,
        op: s.op,
        monthlyUsd: cents(k * price.usdPerHour * HOURS_PER_MONTH),
        what: price.what,
        source: `${price.source}, as of ${price.asOf}`,
      });
    } else if (isLoadBalancerService(s)) {
      unpriced.push({
        urn: s.urn,
        type: s.type,
        op: s.op,
        why: "a cloud load balancer: priced by its cluster's cloud",
      });
    }
  }
  items.sort((a, b) => (a.urn < b.urn ? -1 : a.urn > b.urn ? 1 : 0));
  const monthlyDeltaUsd = cents(items.reduce((n, i) => n + i.monthlyUsd, 0));
  return {
    estimated: true,
    currency: "USD",
    monthlyDeltaUsd,
    items,
    unpriced,
    note: "estimate from list prices (lib/network-preview/prices.ts) × 730 hours; traffic and taxes not included",
  };
}
