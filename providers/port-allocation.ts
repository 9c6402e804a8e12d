import * as pulumi from "@pulumi/pulumi";
import type { PortRange } from "../lib/network/proxy/types";
import { ReleasedPort, idsProblem, planPorts, portRangeProblem } from "../lib/network/proxy/port-planner";

/**
 * Proxy port assignments as a Pulumi resource. The assignments live in the resource's
 * state, so a connection keeps its port across runs without anyone feeding the last run's
 * result back in; the planner (lib/network/proxy/port-planner.ts) decides everything.
 *
 * Serialization: Pulumi stores a dynamic provider as the text of its closure and runs that
 * text in a separate plain-Node process (no ts-node, cwd not necessarily the project), so a
 * `require("../lib/…")` made at run time would not find the TypeScript source. Instead the
 * provider refers to the planner through this file's import; the closure serializer sees
 * that the module is local (not in node_modules) and captures it BY VALUE. That is why the
 * planner imports nothing at run time. test/unit/proxy-providers.test.ts runs the
 * serialized text in a plain `node` process to keep this true.
 */

export interface PortAllocationInputs {
  range: PortRange;
  /** Listener keys (connection ids, or the shared SNI key), sorted by check. */
  ids: string[];
  /** Ports inside the range the proxy uses itself. */
  reserved: number[];
}

export interface PortAllocationOutputs extends PortAllocationInputs {
  /** id → port. */
  assignments: Record<string, number>;
  /** Release history, oldest first; keeps just-freed ports from being reused at once. */
  released: ReleasedPort[];
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

type Provider = pulumi.dynamic.ResourceProvider<PortAllocationInputs, PortAllocationOutputs>;
type Required<K extends keyof Provider> = NonNullable<Provider[K]>;

export const portAllocationProvider: Provider & {
  check: Required<"check">;
  diff: Required<"diff">;
  update: Required<"update">;
  read: Required<"read">;
  delete: Required<"delete">;
} = {
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
    if (failures.length > 0) return Promise.resolve({ failures });
    const ids = isUnknown(news.ids) ? news.ids : [...news.ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const sortedReserved = isUnknown(reserved)
      ? (reserved as number[])
      : [...new Set(reserved as number[])].sort((a, b) => a - b);
    const range = isUnknown(news.range) ? news.range : { from: news.range.from, to: news.range.to };
    return Promise.resolve({ inputs: { range, ids, reserved: sortedReserved } });
  },

  diff(_id, olds, news) {
    const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
    const sortedIds = (ids: string[] | undefined) => [...(ids ?? [])].sort();
    const changed: string[] = [];
    if (!same(olds.range, news.range)) changed.push("range");
    if (!same(sortedIds(olds.ids), sortedIds(news.ids))) changed.push("ids");
    if (!same(olds.reserved ?? [], news.reserved ?? [])) changed.push("reserved");
    // Never a replacement: a new resource would start from empty state and move every port.
    return Promise.resolve({ changes: changed.length > 0, replaces: [], deleteBeforeReplace: false });
  },

  create(inputs) {
    const plan = planPorts({ range: inputs.range, ids: inputs.ids, reserved: inputs.reserved });
    return Promise.resolve({
      id: `ports-${Date.now().toString(36)}`,
      outs: { ...inputs, assignments: plan.assignments, released: plan.released },
    });
  },

  update(_id, olds, news) {
    const plan = planPorts({
      range: news.range,
      ids: news.ids,
      reserved: news.reserved,
      previous: olds.assignments ?? {},
      released: olds.released ?? [],
    });
    return Promise.resolve({ outs: { ...news, assignments: plan.assignments, released: plan.released } });
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
}

/** Ports for a set of listener keys; `assignments` maps each key to its port. */
export class PortAllocation extends pulumi.dynamic.Resource {
  // `declare`, not `!`: ES2022 class fields would reset what the base constructor set.
  declare public readonly assignments: pulumi.Output<Record<string, number>>;
  declare public readonly released: pulumi.Output<ReleasedPort[]>;
  declare public readonly range: pulumi.Output<PortRange>;
  declare public readonly ids: pulumi.Output<string[]>;

  constructor(name: string, args: PortAllocationArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      portAllocationProvider,
      name,
      {
        range: args.range,
        ids: args.ids,
        reserved: args.reserved ?? [],
        assignments: undefined,
        released: undefined,
      },
      opts,
      "klutch",
      "PortAllocation",
    );
  }
}
