/**
 * The one description of the `klutch` package's components: schema.json is generated from it
 * (packageSchema) and the provider checks what it receives against it (inputProblems), so the
 * two never disagree. Pure: no Pulumi, no processes.
 *
 * Shapes follow the Pulumi package schema (pulumi/pulumi pkg/codegen/schema, the metaschema
 * pkg/codegen/schema/pulumi.json at v3.248.0): a component resource has `isComponent: true`,
 * `inputProperties`/`requiredInputs` and `properties`/`required`; a property is a primitive
 * `type`, an `array` with `items`, a map (`object` with `additionalProperties`) or a `$ref` to
 * `#/types/<token>`; `secret: true` marks a secret, `plain: true` an input that SDKs take as a
 * plain value rather than an Input (the component needs it before anything resolves).
 */
import type { Publication } from "../../lib/release/publication";

export type Primitive = "string" | "integer" | "number" | "boolean";

export type Prop =
  | { type: Primitive; description: string; secret?: boolean; plain?: boolean; enum?: readonly string[] }
  | { type: "array"; items: Prop; description: string; plain?: boolean; secret?: boolean }
  | { type: "map"; additionalProperties: Prop; description: string; plain?: boolean; secret?: boolean }
  | { ref: string; description: string; plain?: boolean; secret?: boolean }
  /** Any JSON value (the schema's `pulumi.json#/Any`), for settings passed through as they are. */
  | { type: "any"; description: string; plain?: boolean; secret?: boolean };

/**
 * Stands for a value the engine does not know yet (a preview before the resource it comes from
 * exists). The provider puts it where the engine sent its unknown marker; checks skip it.
 */
export const UNKNOWN: unique symbol = Symbol("unknown");

/** Whether a value is known all through (no UNKNOWN anywhere in it). */
export function isKnown(value: unknown): boolean {
  if (value === UNKNOWN) return false;
  if (Array.isArray(value)) return value.every(isKnown);
  if (typeof value === "object" && value !== null) return Object.values(value).every(isKnown);
  return true;
}

export interface ObjectType {
  description: string;
  properties: Record<string, Prop>;
  required: readonly string[];
}

export interface ComponentSpec {
  /** `klutch:<module>:<Name>`, the token the TypeScript component registers itself with. */
  token: string;
  description: string;
  inputs: Record<string, Prop>;
  requiredInputs: readonly string[];
  outputs: Record<string, Prop>;
  requiredOutputs: readonly string[];
}

export interface PackageSpec {
  name: string;
  version: string;
  description: string;
  /** The schema's pluginDownloadURL, repository, homepage and logoUrl. */
  publication: Publication;
  types: Record<string, ObjectType>;
  components: readonly ComponentSpec[];
}

type Json = Record<string, unknown>;

function propSchema(prop: Prop, forInput: boolean): Json {
  const out: Json = { description: prop.description };
  if ("ref" in prop) out.$ref = `#/types/${prop.ref}`;
  else if (prop.type === "any") out.$ref = "pulumi.json#/Any";
  else if (prop.type === "array") out.type = "array";
  else if (prop.type === "map") out.type = "object";
  else out.type = prop.type;
  if ("items" in prop) out.items = stripDescription(propSchema(prop.items, forInput));
  if ("additionalProperties" in prop)
    out.additionalProperties = stripDescription(propSchema(prop.additionalProperties, forInput));
  if ("enum" in prop && prop.enum) out.description = `${prop.description} One of: ${prop.enum.join(", ")}.`;
  if ("secret" in prop && prop.secret) out.secret = true;
  if (forInput && prop.plain) out.plain = true;
  return out;
}

function stripDescription(schema: Json): Json {
  return Object.fromEntries(Object.entries(schema).filter(([k]) => k !== "description"));
}

function properties(props: Record<string, Prop>, forInput: boolean): Json {
  return Object.fromEntries(Object.entries(props).map(([k, p]) => [k, propSchema(p, forInput)]));
}

/** The package schema (schema.json) of the components. */
export function packageSchema(spec: PackageSpec): Json {
  return {
    name: spec.name,
    displayName: "Klutch",
    // Who publishes the packages: the .NET project's Authors and Company (else "Pulumi Corp.").
    publisher: "anynines",
    version: spec.version,
    description: spec.description,
    license: "Apache-2.0",
    // Where the package lives (lib/release/publication.ts): the engine installs the plugin from
    // pluginDownloadURL by itself when a program's SDK names it (each SDK carries it: package.json's
    // pulumi.server, pulumi-plugin.json's server, the resource options' pluginDownloadURL).
    ...spec.publication,
    keywords: ["pulumi", "klutch", "crossplane", "kubernetes", "category/infrastructure", "kind/component"],
    // supportPack: the SDKs carry the schema's version (package.json, pyproject.toml, the Go
    // SDK's version) and the Go SDK gets a go.mod of its own (module: importBasePath's parent),
    // as codegen/go GeneratePackage of pulumi/pulumi pkg v3.276.0 writes it only then.
    meta: { moduleFormat: "(.*)", supportPack: true },
    // What each SDK generator needs (sdk/<language>, `npm run provider:sdks`,
    // host/toolchain/gen-sdk/main.go). The SDKs' minimum Pulumi SDK versions are left to the
    // generators (codegen/nodejs MinimumValidSDKVersion, codegen/python MinimumValidSDKVersion),
    // which know what the code they write calls.
    language: {
      nodejs: { packageName: "@klutch/pulumi", respectSchemaVersion: true },
      python: { packageName: "pulumi_klutch", respectSchemaVersion: true, pyproject: { enabled: true } },
      // The Go SDK is committed at sdk/go (its go.mod), packages under klutch/.
      go: {
        importBasePath: "github.com/anynines/klutch-pulumi/sdk/go/klutch",
        generateResourceContainerTypes: true,
        respectSchemaVersion: true,
      },
      // The .NET SDK (sdk/dotnet) comes from codegen/dotnet of pkg/v3 3.228.0
      // (host/toolchain/gen-sdk/dotnet.go): namespaces <rootNamespace>.Klutch.<Module>, assembly
      // Anynines.Klutch, as third-party providers name theirs (Pulumi's own use Pulumi.<Name>).
      csharp: { rootNamespace: "Anynines", packageReferences: { Pulumi: "3.*" }, respectSchemaVersion: true },
    },
    config: {},
    provider: { description: "The klutch component provider (no configuration)." },
    types: Object.fromEntries(
      Object.entries(spec.types).map(([token, t]) => [
        token,
        {
          type: "object",
          description: t.description,
          properties: properties(t.properties, true),
          required: [...t.required],
        },
      ]),
    ),
    resources: Object.fromEntries(
      spec.components.map((c) => [
        c.token,
        {
          isComponent: true,
          description: c.description,
          inputProperties: properties(c.inputs, true),
          requiredInputs: [...c.requiredInputs],
          properties: properties(c.outputs, false),
          required: [...c.requiredOutputs],
        },
      ]),
    ),
  };
}

function typeName(prop: Prop): string {
  if ("ref" in prop) return `an object (${prop.ref.split(":").pop()})`;
  if (prop.type === "array") return "a list";
  if (prop.type === "map") return "a map";
  return prop.type === "integer" ? "a whole number" : `a ${prop.type}`;
}

/**
 * What is wrong with known input values, one line per problem, each naming the field (dotted
 * path, list items by index), the bad value and what is expected. Values still unknown (a
 * preview before another resource exists) are UNKNOWN, anywhere in a value, and are skipped; a
 * required input may also be left out of `values` and listed in `unknown`.
 */
export function inputProblems(
  spec: PackageSpec,
  props: Record<string, Prop>,
  required: readonly string[],
  values: Record<string, unknown>,
  at = "",
  unknown: ReadonlySet<string> = new Set(),
): string[] {
  const problems: string[] = [];
  for (const key of required) {
    if (values[key] === undefined && !unknown.has(key))
      problems.push(`${at}${key} is required (${props[key]?.description ?? ""})`);
  }
  for (const [key, value] of Object.entries(values)) {
    const prop = props[key];
    if (!prop) {
      problems.push(`${at}${key} is not an argument; expected one of ${Object.keys(props).join(", ")}`);
      continue;
    }
    if (value !== undefined && value !== null)
      problems.push(...valueProblems(spec, prop, value, `${at}${key}`));
  }
  return problems;
}

function valueProblems(spec: PackageSpec, prop: Prop, value: unknown, field: string): string[] {
  if (value === UNKNOWN) return [];
  const bad = () => [`${field} is ${JSON.stringify(value)}, expected ${typeName(prop)}`];
  if ("ref" in prop) {
    const t = spec.types[prop.ref];
    if (!t) return [`${field}: unknown type ${prop.ref}`];
    if (typeof value !== "object" || Array.isArray(value)) return bad();
    return inputProblems(spec, t.properties, t.required, value as Record<string, unknown>, `${field}.`);
  }
  switch (prop.type) {
    case "any":
      return [];
    case "array":
      if (!Array.isArray(value)) return bad();
      return value.flatMap((v, i) => valueProblems(spec, prop.items, v, `${field}[${i}]`));
    case "map":
      if (typeof value !== "object" || Array.isArray(value)) return bad();
      return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) =>
        valueProblems(spec, prop.additionalProperties, v, `${field}.${k}`),
      );
    case "integer":
      return Number.isInteger(value) ? [] : bad();
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? [] : bad();
    case "boolean":
      return typeof value === "boolean" ? [] : bad();
    case "string":
      if (typeof value !== "string") return bad();
      if (prop.enum && !prop.enum.includes(value))
        return [`${field} is "${value}", expected one of ${prop.enum.join(", ")}`];
      return [];
  }
}
