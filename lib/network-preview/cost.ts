import { HOURS_PER_MONTH, LIST_PRICES, TRAFFIC_PRICES, type ListPrice, type TrafficPrice } from "./prices";
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

const HOURLY_NOTE = "estimate from list prices (lib/network-preview/prices.ts) × 730 hours";

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
  trafficPrices: readonly TrafficPrice[] = TRAFFIC_PRICES,
): CostReport {
  const items: CostReport["items"] = [];
  const unpriced: CostReport["unpriced"] = [];
  const traffic: NonNullable<CostReport["traffic"]>["items"] = [];
  for (const s of steps) {
    const k = sign(s.op);
    if (k === 0) continue;
    const perGb = trafficPrices.find((p) => p.type === s.type);
    if (perGb)
      traffic.push({
        urn: s.urn,
        type: s.type,
        op: s.op,
        usdPerGb: k * perGb.usdPerGb,
        what: perGb.what,
        source: `${perGb.source}, as of ${perGb.asOf}`,
      });
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
  const byUrn = (a: { urn: string }, b: { urn: string }) => (a.urn < b.urn ? -1 : a.urn > b.urn ? 1 : 0);
  items.sort(byUrn);
  traffic.sort(byUrn);
  const monthlyDeltaUsd = cents(items.reduce((n, i) => n + i.monthlyUsd, 0));
  return {
    estimated: true,
    currency: "USD",
    monthlyDeltaUsd,
    items,
    unpriced,
    note:
      traffic.length > 0
        ? `${HOURLY_NOTE}; traffic (per-GB prices listed; --traffic-gb assumes a volume) and taxes not included`
        : `${HOURLY_NOTE}; traffic and taxes not included`,
    ...(traffic.length > 0 ? { traffic: { items: traffic } } : {}),
  };
}

/**
 * The cost with a monthly traffic total: `gbPerMonth` GB through each resource with a per-GB
 * price (what the user assumes; a preview cannot know traffic). The hourly delta is unchanged.
 */
export function withTraffic(cost: CostReport, gbPerMonth: number): CostReport {
  if (!cost.traffic) return cost;
  const items = cost.traffic.items.map((i) => ({ ...i, monthlyUsd: cents(i.usdPerGb * gbPerMonth) }));
  return {
    ...cost,
    note: `${HOURLY_NOTE}, traffic at ${gbPerMonth} GB/month through each per-GB priced resource (assumed); taxes not included`,
    traffic: {
      gbPerMonth,
      monthlyDeltaUsd: cents(items.reduce((n, i) => n + (i.monthlyUsd ?? 0), 0)),
      items,
    },
  };
}
