/**
 * Where an engine run spends its time, resource by resource: the time from the engine's
 * `resourcePreEvent` for a URN (it starts a step) to its `resOutputsEvent` (the step is done),
 * for the steps that change something. The bridge logs the slowest with its "reconcile trace",
 * so an operator sees whether a new connection waited on a Deployment's rollout, a probe or the
 * engine itself. Pure: the clock is passed in.
 *
 * The events (sdk/nodejs/automation/events.ts of @pulumi/pulumi 3.248): `resourcePreEvent` and
 * `resOutputsEvent`, each with `metadata: { op, urn, type }`.
 */
import { urnParts } from "./diagnostics";

export interface StepEventLike {
  resourcePreEvent?: { metadata: { op: string; urn: string; type: string } };
  resOutputsEvent?: { metadata: { op: string; urn: string; type: string } };
}

export interface StepTiming {
  op: string;
  type: string;
  name: string;
  ms: number;
}

/** Steps that change nothing are left out: `same`, `read` and `refresh` cost only the engine. */
const QUIET_OPS = new Set(["same", "read", "refresh"]);

export class StepTimings {
  private readonly started = new Map<string, number>();
  private readonly done: StepTiming[] = [];

  constructor(private readonly now: () => number) {}

  readonly onEvent = (event: StepEventLike): void => {
    const pre = event.resourcePreEvent?.metadata;
    if (pre) {
      if (!QUIET_OPS.has(pre.op)) this.started.set(pre.urn, this.now());
      return;
    }
    const out = event.resOutputsEvent?.metadata;
    if (!out) return;
    const start = this.started.get(out.urn);
    if (start === undefined) return;
    this.started.delete(out.urn);
    const parts = urnParts(out.urn);
    this.done.push({
      op: out.op,
      type: out.type,
      name: parts?.name ?? out.urn,
      ms: this.now() - start,
    });
  };

  /** The `n` slowest finished steps, slowest first, as "op type name: ms". */
  slowest(n: number): string[] {
    return [...this.done]
      .sort((a, b) => b.ms - a.ms)
      .slice(0, n)
      .map((s) => `${s.op} ${s.type} ${s.name}: ${Math.round(s.ms)} ms`);
  }
}
