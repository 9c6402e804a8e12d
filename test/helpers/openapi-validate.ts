import type { Schema } from "../../lib/bind/crds";

/**
 * A small validator for structural CRD schemas, close to what the API server does with a
 * create under strict field validation (kubectl's default): type, required, enum, pattern,
 * lengths, bounds, items, properties, list-map key uniqueness, and unknown fields refused
 * unless the node preserves them. Not covered: CEL rules (x-kubernetes-validations) and
 * defaulting, which the e2e test checks against a real API server.
 */

export interface SchemaViolation {
  /** Field path as the API server prints it, e.g. `spec.permissionClaims[0].version`. */
  path: string;
  message: string;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const INT_BOUNDS: Record<string, [number, number]> = {
  int32: [-(2 ** 31), 2 ** 31 - 1],
  int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
};

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function typeMatches(type: Schema["type"], value: unknown): boolean {
  switch (type) {
    case "object":
      return isObject(value);
    case "array":
      return Array.isArray(value);
    case "string":
      return typeof value === "string";
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number";
    case "boolean":
      return typeof value === "boolean";
    default:
      return true;
  }
}

const join = (path: string, key: string) => (path === "" ? key : `${path}.${key}`);

function check(schema: Schema, value: unknown, path: string, out: SchemaViolation[]): void {
  const fail = (message: string): void => void out.push({ path, message });
  if (schema["x-kubernetes-int-or-string"]) {
    if (!(Number.isInteger(value) || typeof value === "string"))
      return fail("must be an integer or a string");
  } else if (schema.type !== undefined && !typeMatches(schema.type, value)) {
    return fail(`must be of type ${schema.type}`);
  }

  if (schema.enum && !schema.enum.includes(value as string)) {
    fail(`Unsupported value: ${JSON.stringify(value)}: supported values: ${schema.enum.join(", ")}`);
  }
  if (typeof value === "string") {
    if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(value)) {
      fail(`should match '${schema.pattern}'`);
    }
    if (schema.minLength !== undefined && value.length < schema.minLength) {
      fail(`should be at least ${schema.minLength} chars long`);
    }
    if (schema.format === "date-time" && !RFC3339.test(value)) fail("must be an RFC 3339 date-time");
  }
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum) fail(`should be >= ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) fail(`should be <= ${schema.maximum}`);
    const bounds = schema.format ? INT_BOUNDS[schema.format] : undefined;
    if (bounds && (value < bounds[0] || value > bounds[1])) fail(`out of range for ${schema.format}`);
  }
  if (Array.isArray(value)) checkArray(schema, value, path, out);
  if (isObject(value) && schema.type === "object") checkObject(schema, value, path, out);
}

function checkArray(schema: Schema, value: unknown[], path: string, out: SchemaViolation[]): void {
  if (schema.minItems !== undefined && value.length < schema.minItems) {
    out.push({ path, message: `should have at least ${schema.minItems} items` });
  }
  if (schema.items) value.forEach((item, i) => check(schema.items as Schema, item, `${path}[${i}]`, out));
  const listType = schema["x-kubernetes-list-type"];
  if (listType === "map" || listType === "set") {
    const keys = schema["x-kubernetes-list-map-keys"] ?? [];
    const seen = new Set<string>();
    value.forEach((item, i) => {
      const identity =
        listType === "set"
          ? JSON.stringify(item)
          : JSON.stringify(
              keys.map((k) => (item as Record<string, unknown>)[k] ?? schema.items?.properties?.[k]?.default),
            );
      if (seen.has(identity)) out.push({ path: `${path}[${i}]`, message: `Duplicate value: ${identity}` });
      seen.add(identity);
    });
  }
}

function checkObject(
  schema: Schema,
  value: Record<string, unknown>,
  path: string,
  out: SchemaViolation[],
): void {
  const properties = schema.properties ?? {};
  for (const name of schema.required ?? []) {
    // The API server drops nulls for non-nullable fields before validating.
    if (value[name] === undefined || value[name] === null) {
      out.push({ path: join(path, name), message: "Required value" });
    }
  }
  for (const [key, field] of Object.entries(value)) {
    if (field === null) continue;
    const fieldPath = join(path, key);
    const known = properties[key];
    if (known) {
      // ObjectMeta is validated by the API server itself, not by the CRD's schema.
      if (!(path === "" && key === "metadata")) check(known, field, fieldPath, out);
    } else if (schema.additionalProperties) {
      check(schema.additionalProperties, field, fieldPath, out);
    } else if (!schema["x-kubernetes-preserve-unknown-fields"]) {
      out.push({ path: fieldPath, message: `unknown field "${fieldPath}"` });
    }
  }
}

/** Every violation of `value` against `schema`, in document order; [] when it is valid. */
export function validateAgainstSchema(schema: Schema, value: unknown): SchemaViolation[] {
  const out: SchemaViolation[] = [];
  check(schema, value, "", out);
  return out;
}
