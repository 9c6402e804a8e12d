import type { PreviewStep } from "../../contract/preview";
import { planPorts, type ReleasedPort } from "./port-planner";
import type { PortRange } from "./types";

/**
 * How the engine hands a value that is unknown during a preview to the PortAllocation
 * provider (network/proxy/port-allocation.ts UNKNOWN, whose module loads Pulumi).
 * port-prediction.test.ts holds the two equal.
 */
export const ENGINE_UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

const isEngineUnknown = (v: unknown): boolean =>
  v === ENGINE_UNKNOWN ||
  (Array.isArray(v) && v.some(isEngineUnknown)) ||
  (typeof v === "object" && v !== null && Object.values(v).some(isEngineUnknown));

/** What a group's PortAllocation will hold after `up`, or "unknown" when the preview cannot tell. */
export type PortPrediction = { assignments: Record<string, number>; unplaced: string[] } | "unknown";

/**
 * The PortAllocation's assignments after `up`: what its provider's create or update will
 * compute (network/proxy/port-allocation.ts), from the inputs and old state of this preview.
 */
export function predictPorts(step: PreviewStep | undefined): PortPrediction {
  if (!step) return "unknown";
  const outs = step.oldOutputs ?? {};
  if (step.op === "same") {
    return {
      assignments: (outs.assignments ?? {}) as Record<string, number>,
      unplaced: (outs.unplaced ?? []) as string[],
    };
  }
  const n = step.newInputs;
  if (!n || isEngineUnknown(n.range) || isEngineUnknown(n.ids) || isEngineUnknown(n.reserved))
    return "unknown";
  const common = {
    range: n.range as PortRange,
    ids: n.ids as string[],
    reserved: (n.reserved ?? []) as number[],
    ...(n.overflow ? { overflow: n.overflow as "error" | "leave-out" } : {}),
    ...(n.required ? { required: n.required as string[] } : {}),
  };
  if (step.op === "create" || step.op === "replace") {
    const seed = n.seed && !isEngineUnknown(n.seed) ? (n.seed as Record<string, number>) : undefined;
    const plan = planPorts({ ...common, ...(seed ? { previous: seed } : {}) });
    return { assignments: plan.assignments, unplaced: plan.unplaced };
  }
  const plan = planPorts({
    ...common,
    previous: (outs.assignments ?? {}) as Record<string, number>,
    released: (outs.released ?? []) as ReleasedPort[],
  });
  return { assignments: plan.assignments, unplaced: plan.unplaced };
}

/** The PortAllocation hop's detail: its range moving, which shifts every port of the group. */
export function portsDetail(s: PreviewStep): string | undefined {
  const o = s.oldOutputs?.range as PortRange | undefined;
  const n = s.newInputs?.range as PortRange | undefined;
  if (o && n && (o.from !== n.from || o.to !== n.to)) return `range ${o.from}-${o.to} → ${n.from}-${n.to}`;
  return undefined;
}
