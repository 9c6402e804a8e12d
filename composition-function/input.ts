/**
 * The function's input: the `input` block of a composition's pipeline step, checked and turned
 * into typed resource templates. Crossplane passes the block through as it stands in the
 * Composition (no schema checks it on the way), so every mistake is caught here, named by its
 * place in the input, with the value found and what to write instead.
 *
 * The input is the part of function-patch-and-transform's `Resources` (pt.fn.crossplane.io/v1beta1)
 * that this project's compositions use; anything else is refused rather than ignored, so a
 * composition never silently loses a transform or a patch type it relies on.
 */
import { FieldPathError, parseFieldPath } from "./field-path.js";
import { isJsonObject, type JsonObject } from "./json.js";

/** The name the Function package is installed under, which compositions' `functionRef` names. */
export const FUNCTION_NAME = "function-klutch";
export const INPUT_API_VERSION = "fn.klutch.anynines.com/v1alpha1";
export const RESOURCES_KIND = "Resources";

export const PATCH_TYPES = ["FromCompositeFieldPath", "ToCompositeFieldPath"] as const;
export type PatchType = (typeof PATCH_TYPES)[number];

/** Optional skips a patch whose source is missing; Required also holds back a resource not created yet. */
export const FROM_FIELD_PATH_POLICIES = ["Optional", "Required"] as const;
export type FromFieldPathPolicy = (typeof FROM_FIELD_PATH_POLICIES)[number];

export const READINESS_CHECK_TYPES = ["MatchCondition", "None"] as const;
export type ReadinessCheckType = (typeof READINESS_CHECK_TYPES)[number];

export interface PatchTemplate {
  type: PatchType;
  fromFieldPath: string;
  /** Defaults to fromFieldPath, as in function-patch-and-transform. */
  toFieldPath: string;
  fromFieldPathPolicy: FromFieldPathPolicy;
}

export type ReadinessCheck =
  { type: "MatchCondition"; matchCondition: { type: string; status: string } } | { type: "None" };

export interface ResourceTemplate {
  /** The composed resource's name in the pipeline (its crossplane.io/composition-resource-name). */
  name: string;
  base: JsonObject;
  patches: PatchTemplate[];
  /** Empty: ready when the Ready condition is True. */
  readinessChecks: ReadinessCheck[];
}

/** A mistake in the input; its message names the field, the value found and the fix. */
export class InputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InputError";
  }
}

const show = (value: unknown): string => (value === undefined ? "nothing" : JSON.stringify(value));

/** Keys a level of the input may have; any other is refused, naming the ones allowed. */
function onlyKeys(where: string, object: JsonObject, allowed: readonly string[]): void {
  const unknown = Object.keys(object).filter((k) => !allowed.includes(k));
  if (unknown.length > 0)
    throw new InputError(
      `${where}: unsupported field${unknown.length > 1 ? "s" : ""} ${unknown.map((k) => JSON.stringify(k)).join(", ")}; ` +
        `${FUNCTION_NAME} supports only ${allowed.join(", ")} here`,
    );
}

function nonEmptyString(where: string, value: unknown, fix: string): string {
  if (typeof value !== "string" || value === "")
    throw new InputError(`${where} is ${show(value)}; it must be a non-empty string (${fix})`);
  return value;
}

function fieldPath(where: string, value: unknown): string {
  const path = nonEmptyString(where, value, "a field path such as spec.port or metadata.labels[a.b/c]");
  try {
    parseFieldPath(path);
  } catch (e) {
    if (e instanceof FieldPathError) throw new InputError(`${where}: ${e.message}`);
    throw e;
  }
  return path;
}

/**
 * The resource templates of a function input; throws an InputError for a missing input, another
 * apiVersion or kind, no resources, and any field this function does not support.
 */
export function parseInput(input: unknown): ResourceTemplate[] {
  const expected = `apiVersion ${INPUT_API_VERSION}, kind ${RESOURCES_KIND}`;
  if (!isJsonObject(input) || Object.keys(input).length === 0)
    throw new InputError(
      `the pipeline step has input ${show(input)}; ${FUNCTION_NAME} needs an input with ${expected}`,
    );
  if (input.apiVersion !== INPUT_API_VERSION || input.kind !== RESOURCES_KIND)
    throw new InputError(
      `the input has apiVersion ${show(input.apiVersion)}, kind ${show(input.kind)}; ${FUNCTION_NAME} takes ${expected}`,
    );
  onlyKeys("input", input, ["apiVersion", "kind", "metadata", "resources"]);
  const resources = input.resources;
  // function-patch-and-transform refuses an input without resources too (ValidateResources).
  if (resources === undefined || (Array.isArray(resources) && resources.length === 0))
    throw new InputError(
      `input.resources: resources are required; list at least one composed resource (name, base, patches)`,
    );
  if (!Array.isArray(resources))
    throw new InputError(`input.resources is ${show(resources)}; it must be a list of composed resources`);

  const templates = resources.map((r: unknown, i) => parseResource(`input.resources[${i}]`, r));
  const seen = new Set<string>();
  for (const [i, t] of templates.entries()) {
    if (seen.has(t.name))
      throw new InputError(
        `input.resources[${i}].name ${show(t.name)} is used twice; each composed resource needs a name of its own`,
      );
    seen.add(t.name);
  }
  return templates;
}

function parseResource(where: string, raw: unknown): ResourceTemplate {
  if (!isJsonObject(raw))
    throw new InputError(`${where} is ${show(raw)}; it must be an object with name, base and patches`);
  onlyKeys(where, raw, ["name", "base", "patches", "readinessChecks"]);
  const name = nonEmptyString(`${where}.name`, raw.name, "the composed resource's name in the pipeline");
  const at = `${where} ${JSON.stringify(name)}:`;
  const base = raw.base;
  if (!isJsonObject(base))
    throw new InputError(
      `${at} base is ${show(base)}; it must be the composed resource's manifest (apiVersion, kind, spec)`,
    );
  nonEmptyString(`${at} base.apiVersion`, base.apiVersion, "the composed resource's apiVersion");
  nonEmptyString(`${at} base.kind`, base.kind, "the composed resource's kind");

  const patches = listOf(`${at} patches`, raw.patches).map((p, i) => parsePatch(`${at} patches[${i}]`, p));
  const checks = listOf(`${at} readinessChecks`, raw.readinessChecks).map((c, i) =>
    parseReadinessCheck(`${at} readinessChecks[${i}]`, c),
  );
  return { name, base, patches, readinessChecks: checks };
}

function listOf(where: string, value: unknown): unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new InputError(`${where} is ${show(value)}; it must be a list`);
  return value as unknown[];
}

function parsePatch(where: string, raw: unknown): PatchTemplate {
  if (!isJsonObject(raw))
    throw new InputError(`${where} is ${show(raw)}; it must be an object with type and fromFieldPath`);
  const type = raw.type;
  if (!PATCH_TYPES.includes(type as PatchType))
    throw new InputError(
      `${where}.type is ${show(type)}; ${FUNCTION_NAME} supports patch types ${PATCH_TYPES.join(", ")}`,
    );
  onlyKeys(where, raw, ["type", "fromFieldPath", "toFieldPath", "policy"]);
  const fromFieldPath = fieldPath(`${where}.fromFieldPath`, raw.fromFieldPath);
  const toFieldPath =
    raw.toFieldPath === undefined ? fromFieldPath : fieldPath(`${where}.toFieldPath`, raw.toFieldPath);
  return {
    type: type as PatchType,
    fromFieldPath,
    toFieldPath,
    fromFieldPathPolicy: parsePolicy(where, raw.policy),
  };
}

function parsePolicy(where: string, policy: unknown): FromFieldPathPolicy {
  if (policy === undefined) return "Optional";
  if (!isJsonObject(policy))
    throw new InputError(
      `${where}.policy is ${show(policy)}; it must be an object such as {fromFieldPath: Required}`,
    );
  onlyKeys(`${where}.policy`, policy, ["fromFieldPath"]);
  const value = policy.fromFieldPath;
  if (value === undefined) return "Optional";
  if (!FROM_FIELD_PATH_POLICIES.includes(value as FromFieldPathPolicy))
    throw new InputError(
      `${where}.policy.fromFieldPath is ${show(value)}; it must be ${FROM_FIELD_PATH_POLICIES.join(" or ")}`,
    );
  return value as FromFieldPathPolicy;
}

function parseReadinessCheck(where: string, raw: unknown): ReadinessCheck {
  if (!isJsonObject(raw)) throw new InputError(`${where} is ${show(raw)}; it must be an object with a type`);
  const type = raw.type;
  if (type === "None") {
    onlyKeys(where, raw, ["type"]);
    return { type };
  }
  if (type === "MatchCondition") {
    onlyKeys(where, raw, ["type", "matchCondition"]);
    const match = raw.matchCondition;
    if (!isJsonObject(match))
      throw new InputError(
        `${where}.matchCondition is ${show(match)}; type MatchCondition needs matchCondition {type, status}, e.g. {type: Ready, status: "True"}`,
      );
    onlyKeys(`${where}.matchCondition`, match, ["type", "status"]);
    return {
      type,
      matchCondition: {
        type: nonEmptyString(`${where}.matchCondition.type`, match.type, "a condition type such as Ready"),
        status: nonEmptyString(
          `${where}.matchCondition.status`,
          match.status,
          'a condition status such as "True"',
        ),
      },
    };
  }
  throw new InputError(
    `${where}.type is ${show(type)}; ${FUNCTION_NAME} supports readiness check types ${READINESS_CHECK_TYPES.join(", ")}`,
  );
}
