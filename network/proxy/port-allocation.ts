import * as pulumi from "@pulumi/pulumi";
import type { PortRange } from "./model/types";
import { ReleasedPort, idsProblem, planPorts, portRangeProblem } from "./model/port-planner";
import type { CompleteProvider } from "../../providers/dynamic/provider-type";
import { KlutchResource } from "../../providers/dynamic/klutch-resource";

/**
 * Proxy port assignments as a Pulumi resource. The assignments live in the resource's
 * state, so a connection keeps its port across runs without anyone feeding the last run's
 * result back in; the planner (network/proxy/model/port-planner.ts) decides everything.
 *
 * Serialization: Pulumi stores a dynamic provider as the text of its closure and runs that
 * text in a separate plain-Node process (no ts-node, cwd not necessarily the project), so a
 * `require("../lib/…")` made at run time would not find the TypeScript source. Instead the
 * provider refers to the planner through this file's import; the closure serializer sees
 * that the module is local (not in node_modules) and captures it BY VALUE. That is why the
 * planner imports nothing at run time. network/proxy/providers.test.ts runs the
 * serialized text in a plain `node` process to keep this true.
 */

export interface PortAllocationInputs {
  range: PortRange;
  /** Listener keys (connection ids, or the shared SNI key), sorted by check. */
  ids: string[];
  /** Ports inside the range the proxy uses itself. */
  reserved: number[];
  /**
   * "leave-out": when the range is full, the ids that do not fit get no port (listed in
   * `unplaced`) instead of the whole update failing. Absent in stacks made before it existed.
   */
  overflow?: "error" | "leave-out";
  /** Ids served before any other when ports are short (the proxy's own listeners). */
  required?: string[];
  /**
   * Ports the ids had before this resource existed (the bridge: each path's status.port),
   * used at create only. A stack re-created after its checkpoint was lost thereby hands every
   * connection its old port again. Never diffed: later runs keep the ports in state.
   */
  seed?: Record<string, number>;
}

export interface PortAllocationOutputs extends PortAllocationInputs {
  /** id → port. */
  assignments: Record<string, number>;
  /** Release history, oldest first; keeps just-freed ports from being reused at once. */
  released: ReleasedPort[];
  /** Ids left without a port (range full, `overflow: "leave-out"`); absent in old state. */
  unplaced?: string[];
}

/**
 * How the dynamic provider host hands `check` a value that is unknown during a preview (e.g.
 * ids derived from Outputs not resolved yet), anywhere inside a property.
 */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

function isUnknown(v: unknown): boolean {
  if (v === UNKNOWN) return true;
  if (Array.isArray(v)) return v.some(isUnknown);
  return typeof v === "object" && v !== null && Object.values(v).some(isUnknown);
}

export const portAllocationProvider: CompleteProvider<
  PortAllocationInputs,
  PortAllocationOutputs,
  "check" | "diff" | "update" | "read" | "delete"
> = {
  check(_olds, news) {
    const failures: pulumi.dynamic.CheckFailure[] = [];
    // Values unknown during a preview are passed through unjudged; the real check follows at `up`.
    const rangeProblem = isUnknown(news.range) ? undefined : portRangeProblem(news.range, "range");
    if (rangeProblem) failures.push({ property: "range", reason: rangeProblem });
    const problem = isUnknown(news.ids) ? undefined : idsProblem(news.ids, "ids");
    if (problem) failures.push({ property: "ids", reason: problem });
    const reserved: unknown = news.reserved ?? [];
    const reservedOk =
      isUnknown(reserved) ||
      (Array.isArray(reserved) &&
        reserved.every((p) => typeof p === "number" && Number.isInteger(p) && p >= 1 && p <= 65535));
    if (!reservedOk) {
      failures.push({
        property: "reserved",
        reason: "reserved must be a list of ports (whole numbers 1-65535)",
      });
    }
    const overflow: unknown = news.overflow;
    if (overflow !== undefined && overflow !== "error" && overflow !== "leave-out" && !isUnknown(overflow)) {
      failures.push({ property: "overflow", reason: 'overflow must be "error" or "leave-out"' });
    }
    const required: unknown = news.required;
    if (
      required !== undefined &&
      !isUnknown(required) &&
      !(Array.isArray(required) && required.every((r) => typeof r === "string"))
    ) {
      failures.push({ property: "required", reason: "required must be a list of ids" });
    }
    if (failures.length > 0) return Promise.resolve({ failures });
    const ids = isUnknown(news.ids) ? news.ids : [...news.ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const sortedReserved = isUnknown(reserved)
      ? (reserved as number[])
      : [...new Set(reserved as number[])].sort((a, b) => a - b);
    const range = isUnknown(news.range) ? news.range : { from: news.range.from, to: news.range.to };
    return Promise.resolve({
      inputs: {
        range,
        ids,
        reserved: sortedReserved,
        ...(news.overflow !== undefined ? { overflow: news.overflow } : {}),
        ...(news.required !== undefined ? { required: news.required } : {}),
        ...(news.seed !== undefined ? { seed: news.seed } : {}),
      },
    });
  },

  diff(_id, olds, news) {
    const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
    const sortedIds = (ids: string[] | undefined) => [...(ids ?? [])].sort();
    const changed: string[] = [];
    if (!same(olds.range, news.range)) changed.push("range");
    if (!same(sortedIds(olds.ids), sortedIds(news.ids))) changed.push("ids");
    if (!same(olds.reserved ?? [], news.reserved ?? [])) changed.push("reserved");
    // Switching the overflow mode matters only while some id has no port (or would fail).
    if ((olds.overflow ?? "error") !== (news.overflow ?? "error")) changed.push("overflow");
    // Never a replacement: a new resource would start from empty state and move every port.
    return Promise.resolve({ changes: changed.length > 0, replaces: [], deleteBeforeReplace: false });
  },

  create(inputs) {
    const plan = planPorts({
      range: inputs.range,
      ids: inputs.ids,
      reserved: inputs.reserved,
      ...(inputs.seed && !isUnknown(inputs.seed) ? { previous: inputs.seed } : {}),
      ...(inputs.overflow ? { overflow: inputs.overflow } : {}),
      ...(inputs.required ? { required: inputs.required } : {}),
    });
    return Promise.resolve({
      id: `ports-${Date.now().toString(36)}`,
      outs: { ...inputs, assignments: plan.assignments, released: plan.released, unplaced: plan.unplaced },
    });
  },

  update(_id, olds, news) {
    const plan = planPorts({
      range: news.range,
      ids: news.ids,
      reserved: news.reserved,
      previous: olds.assignments ?? {},
      released: olds.released ?? [],
      ...(news.overflow ? { overflow: news.overflow } : {}),
      ...(news.required ? { required: news.required } : {}),
    });
    return Promise.resolve({
      outs: { ...news, assignments: plan.assignments, released: plan.released, unplaced: plan.unplaced },
    });
  },

  read(id, props) {
    // Nothing outside the state holds the assignments: the state is the truth.
    return Promise.resolve({ id, props });
  },

  delete() {
    return Promise.resolve();
  },
};

export interface PortAllocationArgs {
  range: pulumi.Input<PortRange>;
  ids: pulumi.Input<pulumi.Input<string>[]>;
  reserved?: pulumi.Input<number[]>;
  overflow?: "error" | "leave-out";
  required?: string[];
  seed?: pulumi.Input<Record<string, number>>;
}

/** Ports for a set of listener keys; `assignments` maps each key to its port. */
export class PortAllocation extends KlutchResource {
  // `declare`, not `!`: ES2022 class fields would reset what the base constructor set.
  declare public readonly assignments: pulumi.Output<Record<string, number>>;
  declare public readonly released: pulumi.Output<ReleasedPort[]>;
  declare public readonly range: pulumi.Output<PortRange>;
  declare public readonly ids: pulumi.Output<string[]>;
  declare public readonly unplaced: pulumi.Output<string[] | undefined>;

  constructor(name: string, args: PortAllocationArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      portAllocationProvider,
      name,
      {
        range: args.range,
        ids: args.ids,
        reserved: args.reserved ?? [],
        ...(args.overflow ? { overflow: args.overflow } : {}),
        ...(args.required ? { required: args.required } : {}),
        ...(args.seed ? { seed: args.seed } : {}),
        assignments: undefined,
        released: undefined,
        unplaced: undefined,
      },
      opts,
      "klutch",
      "PortAllocation",
    );
  }
}
