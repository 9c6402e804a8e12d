import type { EngineEvent, StepEventMetadata } from "@pulumi/pulumi/automation";
import type { Operation, PolicyResult } from "../../lib/network-preview/schema";
import { changedInputs, type ResourceStep } from "./plan/steps";

/**
 * A step's metadata as the engine sends it: the SDK's own type (@pulumi/pulumi
 * automation/events.ts StepEventMetadata), so its field names are the engine's, e.g. a
 * detailed diff's `diffKind` ("update-replace", …), not a guess of them.
 */
type StepMetadata = StepEventMetadata;

/** The engine's step ops folded into the report's: every kind of replacement is a replace. */
function opOf(op: string): Operation {
  if (op === "create" || op === "update" || op === "delete" || op === "same" || op === "read") return op;
  if (op === "refresh") return "refresh";
  if (op.includes("replace")) return "replace";
  if (op === "delete-replaced" || op === "discard" || op === "remove-pending-replace") return "delete";
  return "update";
}

/**
 * Collects the resource steps of an engine run from its events (`onEvent`). A replacement
 * shows as several steps (create-replacement, replace, delete-replaced); they are folded
 * into one per URN, and whether it deletes first is read from the order the engine chose.
 */
export class StepCollector {
  private readonly steps = new Map<string, ResourceStep>();
  private readonly rawOps = new Map<string, string[]>();

  constructor(private readonly progress?: (line: string) => void) {}

  /** CrossGuard's findings, when the run had policy packs (`policyEvent`). */
  readonly policy: PolicyResult[] = [];

  /**
   * Events this collector could not read. The SDK swallows an exception thrown from onEvent
   * (it logs "Failed to parse engine event" and goes on), so a step would vanish from the
   * report without a word; each one is kept here for the report's notes instead.
   */
  readonly unreadable: string[] = [];

  onEvent = (e: EngineEvent): void => {
    try {
      this.read(e);
    } catch (err) {
      const urn = e.resourcePreEvent?.metadata.urn ?? "";
      this.unreadable.push(`an engine event ${urn} could not be read: ${(err as Error).message}`);
    }
  };

  private read(e: EngineEvent): void {
    if (e.policyEvent) {
      const p = e.policyEvent;
      this.policy.push({
        policy: p.policyName,
        enforcement: p.enforcementLevel,
        message: p.message.trim(),
        ...(p.resourceUrn ? { urn: p.resourceUrn } : {}),
      });
      this.progress?.(
        `  policy ${p.policyName} (${p.enforcementLevel}): ${p.message.trim().split("\n")[0] ?? ""}`,
      );
      return;
    }
    const m: StepMetadata | undefined = e.resourcePreEvent?.metadata;
    if (!m) return;
    if (m.type === "pulumi:pulumi:Stack" || m.type === "pulumi:providers:pulumi-nodejs") return;
    const ops = this.rawOps.get(m.urn) ?? [];
    ops.push(m.op);
    this.rawOps.set(m.urn, ops);
    if (m.op !== "same") this.progress?.(`  ${m.op} ${m.urn.slice(m.urn.lastIndexOf("::") + 2)} (${m.type})`);
    const detailed = m.detailedDiff ?? {};
    const replaceReasons = Object.entries(detailed)
      .filter(([, d]) => String(d.diffKind).endsWith("-replace"))
      .map(([k]) => k);
    const existing = this.steps.get(m.urn);
    const op = opOf(m.op);
    const step: ResourceStep = {
      urn: m.urn,
      type: m.type,
      op: existing?.op === "replace" ? "replace" : op,
      name: m.urn.slice(m.urn.lastIndexOf("::") + 2),
      ...(m.old?.inputs
        ? { oldInputs: m.old.inputs }
        : existing?.oldInputs
          ? { oldInputs: existing.oldInputs }
          : {}),
      ...(m.old?.outputs
        ? { oldOutputs: m.old.outputs }
        : existing?.oldOutputs
          ? { oldOutputs: existing.oldOutputs }
          : {}),
      ...(m.new?.inputs
        ? { newInputs: m.new.inputs }
        : existing?.newInputs
          ? { newInputs: existing.newInputs }
          : {}),
      diffPaths: [
        ...new Set([
          ...(existing?.diffPaths ?? []),
          ...Object.keys(detailed),
          ...(m.diffs ?? []),
          // Dynamic providers answer diff with `changes` only; the inputs show what changed.
          ...(Object.keys(detailed).length === 0 && !m.diffs?.length && op !== "same"
            ? changedInputs(m.old?.inputs, m.new?.inputs)
            : []),
        ]),
      ].sort(),
      replaceReasons: [...new Set([...(existing?.replaceReasons ?? []), ...replaceReasons])].sort(),
      // The engine deletes first when it emits delete-replaced before create-replacement.
      deleteBeforeReplace: deletesFirst(ops),
    };
    this.steps.set(m.urn, step);
  }

  all(): ResourceStep[] {
    return [...this.steps.values()].sort((a, b) => (a.urn < b.urn ? -1 : a.urn > b.urn ? 1 : 0));
  }

  byName(name: string): ResourceStep | undefined {
    return this.all().find((s) => s.name === name);
  }
}

function deletesFirst(ops: string[]): boolean {
  const del = ops.indexOf("delete-replaced");
  const create = ops.indexOf("create-replacement");
  return del >= 0 && (create < 0 || del < create);
}
