/**
 * Patch-and-transform composition over plain objects: the part of function-patch-and-transform
 * v0.9.2 (RunFunction in its fn.go, IsReady in its ready.go) that this project's compositions
 * use, without the SDK, so it can be reasoned about and tested as data in, data out.
 *
 * Every call composes every template again from its base: Crossplane deletes a composed resource
 * that is missing from the desired state, so a resource is left out only when it does not exist
 * yet and a Required patch source is missing.
 */
import { FieldPathError, getFieldPath, setFieldPath } from "./field-path.js";
import type { PatchTemplate, ReadinessCheck, ResourceTemplate } from "./input.js";
import { deepCopy, isJsonObject, type JsonObject } from "./json.js";

export type Severity = "Fatal" | "Warning" | "Normal";

export interface Message {
  severity: Severity;
  message: string;
}

/** A composed resource as Crossplane observed it (the SDK's Resource carries more; only this is read). */
export interface ObservedComposed {
  resource: JsonObject;
}

export interface DesiredComposed {
  name: string;
  resource: JsonObject;
  /** Crossplane 1.20 counts an unspecified readiness as not ready, so it is always decided here. */
  ready: boolean;
}

export interface Composition {
  /** The composed resources to emit, in template order. */
  composed: DesiredComposed[];
  /** What ToCompositeFieldPath patches wrote, to be merged into the desired composite resource. */
  compositeStatusPatch: JsonObject;
  /** False when a resource was held back: the composite cannot be ready without it. */
  compositeReady?: false;
  /**
   * Warnings about skipped patches and held-back resources, or a single Fatal (a patch that
   * cannot be applied at all), after which `composed` is empty and nothing may be applied.
   */
  results: Message[];
}

/**
 * Composes `templates` against the observed composite resource and the observed composed
 * resources (by composition resource name).
 */
export function patchAndTransform(
  observedComposite: JsonObject,
  observedComposed: Readonly<Record<string, ObservedComposed>>,
  templates: readonly ResourceTemplate[],
): Composition {
  const composed: DesiredComposed[] = [];
  const compositeStatusPatch: JsonObject = {};
  const results: Message[] = [];
  let heldBack = 0;

  for (const t of templates) {
    const observed = observedComposed[t.name]?.resource;
    const desired = deepCopy(t.base);
    if (observed) keepIdentity(desired, observed);

    let skip = false;
    for (const [i, p] of t.patches.entries()) {
      const outcome = applyPatch(p, { observedComposite, observed, desired, compositeStatusPatch });
      if (outcome.kind === "applied") continue;
      if (outcome.kind === "failed") {
        const message = `cannot render composed resource ${JSON.stringify(t.name)} ${JSON.stringify(p.type)} patch at index ${i}: ${outcome.error}`;
        return { composed: [], compositeStatusPatch: {}, results: [{ severity: "Fatal", message }] };
      }
      // The source field is missing: an Optional patch is skipped without a word.
      if (p.fromFieldPathPolicy !== "Required") continue;
      const missing = `${outcome.source} has no field ${JSON.stringify(p.fromFieldPath)}`;
      if (p.type === "FromCompositeFieldPath" && !observed) {
        // The point of Required: do not create the resource until its source exists. Later
        // patches would only write to a resource that is discarded, so stop here.
        results.push({
          severity: "Warning",
          message: `not adding new composed resource ${JSON.stringify(t.name)} to desired state because ${JSON.stringify(p.type)} patch at index ${i} has 'policy.fromFieldPath: Required': ${missing}`,
        });
        skip = true;
        break;
      }
      // The resource exists already: holding it back would delete it, so only the patch is skipped.
      results.push({
        severity: "Warning",
        message: `cannot render composed resource ${JSON.stringify(t.name)} ${JSON.stringify(p.type)} patch at index ${i}: ignoring 'policy.fromFieldPath: Required' because ${missing}`,
      });
    }
    if (skip) {
      heldBack++;
      continue;
    }
    composed.push({
      name: t.name,
      resource: desired,
      ready: observed ? isReady(observed, t.readinessChecks) : false,
    });
  }

  return {
    composed,
    compositeStatusPatch,
    ...(heldBack > 0 ? { compositeReady: false as const } : {}),
    results,
  };
}

/**
 * An existing composed resource keeps its name and namespace in desired state, so Crossplane
 * updates it rather than creating another; only these are copied, as desired state is an overlay
 * of the fields this function means, not the observed object.
 */
function keepIdentity(desired: JsonObject, observed: JsonObject): void {
  const meta = isJsonObject(observed.metadata) ? observed.metadata : {};
  for (const field of ["namespace", "name"] as const) {
    const value = meta[field];
    if (typeof value === "string" && value !== "") setFieldPath(desired, `metadata.${field}`, value);
  }
}

interface PatchTargets {
  observedComposite: JsonObject;
  observed: JsonObject | undefined;
  desired: JsonObject;
  compositeStatusPatch: JsonObject;
}

type PatchOutcome =
  { kind: "applied" } | { kind: "missing"; source: string } | { kind: "failed"; error: string };

/** Copies one value from its source to its destination; a missing source is reported, not an error. */
function applyPatch(p: PatchTemplate, targets: PatchTargets): PatchOutcome {
  const [from, to, source] =
    p.type === "FromCompositeFieldPath"
      ? [targets.observedComposite, targets.desired, "the composite resource"]
      : [targets.observed, targets.compositeStatusPatch, "the observed composed resource"];
  if (!from) return { kind: "missing", source: `${source} (not created yet)` };
  try {
    const value = getFieldPath(from, p.fromFieldPath);
    if (!value.found) return { kind: "missing", source };
    setFieldPath(to, p.toFieldPath, deepCopy(value.value));
    return { kind: "applied" };
  } catch (e) {
    if (e instanceof FieldPathError) return { kind: "failed", error: e.message };
    throw e;
  }
}

/**
 * Whether an observed composed resource is ready: every check passes, and without checks its
 * Ready condition is True (function-patch-and-transform's default, as there is no API server
 * defaulting of the input).
 */
export function isReady(observed: JsonObject, checks: readonly ReadinessCheck[]): boolean {
  if (checks.length === 0) return conditionStatus(observed, "Ready") === "True";
  return checks.every((c) =>
    c.type === "None" ? true : conditionStatus(observed, c.matchCondition.type) === c.matchCondition.status,
  );
}

/**
 * The status of the condition of `type` in status.conditions; "Unknown" when there is none, as
 * crossplane-runtime's GetCondition answers (so a MatchCondition on "Unknown" matches a missing one).
 */
export function conditionStatus(object: JsonObject, type: string): string {
  const status = isJsonObject(object.status) ? object.status : {};
  const conditions = Array.isArray(status.conditions) ? (status.conditions as unknown[]) : [];
  const found = conditions.find((c): c is JsonObject => isJsonObject(c) && c.type === type);
  return typeof found?.status === "string" ? found.status : "Unknown";
}
