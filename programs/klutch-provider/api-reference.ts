/**
 * The package's API reference, generated from schema.json (not written by hand): docs/api/<module>.md
 * per module, each resource with its inputs and outputs, each object type with its fields, and
 * docs/api/index.md listing them. `npm run provider:schema` writes it with the schema, and
 * schema.test.ts fails when the committed pages are not what this makes.
 */

interface Property {
  description?: string;
  type?: string;
  $ref?: string;
  items?: Property;
  additionalProperties?: Property;
  secret?: boolean;
  plain?: boolean;
}

interface Resource {
  description: string;
  inputProperties: Record<string, Property>;
  requiredInputs?: string[];
  properties: Record<string, Property>;
  required?: string[];
}

interface ObjectType {
  description: string;
  properties: Record<string, Property>;
  required?: string[];
}

export interface ReferenceSchema {
  name: string;
  version: string;
  description: string;
  types: Record<string, ObjectType>;
  resources: Record<string, Resource>;
}

const GENERATED =
  "<!-- Generated from programs/klutch-provider/schema.json by `npm run provider:schema`: do not edit. -->";

/** `klutch:network:TcpProxy` → ["network", "TcpProxy"]. */
function parts(token: string): [string, string] {
  const [, module, name] = token.split(":");
  return [module!, name!];
}

const anchor = (name: string) => name.toLowerCase();
/** Table cells hold one line, and `|` would end the cell. */
const cell = (text: string) => text.replace(/\s*\n\s*/g, " ").replace(/\|/g, "\\|");

function typeOf(p: Property, from: string): string {
  if (p.$ref === "pulumi.json#/Any") return "any";
  if (p.$ref) {
    const [module, name] = parts(p.$ref.replace("#/types/", ""));
    return module === from ? `[${name}](#${anchor(name)})` : `[${name}](${module}.md#${anchor(name)})`;
  }
  if (p.type === "array" && p.items) return `list of ${typeOf(p.items, from)}`;
  if (p.type === "object" && p.additionalProperties) return `map of ${typeOf(p.additionalProperties, from)}`;
  return p.type ?? "any";
}

function table(
  props: Record<string, Property>,
  required: string[],
  module: string,
  inputs: boolean,
): string[] {
  const names = Object.keys(props);
  if (names.length === 0) return ["None.", ""];
  const rows = names.map((n) => {
    const p = props[n]!;
    const notes = [
      required.includes(n) ? "required" : "optional",
      ...(p.secret ? ["secret"] : []),
      ...(inputs && p.plain ? ["plain value"] : []),
    ];
    return `| \`${n}\` | ${typeOf(p, module)} | ${notes.join(", ")} | ${cell(p.description ?? "")} |`;
  });
  return ["| name | type | notes | description |", "| --- | --- | --- | --- |", ...rows, ""];
}

function modulePage(schema: ReferenceSchema, module: string): string {
  const lines = [GENERATED, "", `# \`${schema.name}\` module \`${module}\``, ""];
  for (const [token, r] of Object.entries(schema.resources).filter(([t]) => parts(t)[0] === module)) {
    lines.push(
      `## ${parts(token)[1]}`,
      "",
      `\`${token}\`, a component resource.`,
      "",
      cell(r.description),
      "",
    );
    lines.push("### Inputs", "", ...table(r.inputProperties, r.requiredInputs ?? [], module, true));
    lines.push("### Outputs", "", ...table(r.properties, r.required ?? [], module, false));
  }
  const types = Object.entries(schema.types).filter(([t]) => parts(t)[0] === module);
  if (types.length > 0) lines.push("## Types", "");
  for (const [token, t] of types)
    lines.push(
      `### ${parts(token)[1]}`,
      "",
      cell(t.description),
      "",
      ...table(t.properties, t.required ?? [], module, true),
    );
  return `${lines.join("\n").trimEnd()}\n`;
}

/** Every page of the reference, by its path under docs/api/. */
export function apiReference(schema: ReferenceSchema): Map<string, string> {
  const modules = [
    ...new Set([...Object.keys(schema.resources), ...Object.keys(schema.types)].map((t) => parts(t)[0])),
  ].sort();
  const pages = new Map<string, string>();
  const index = [
    GENERATED,
    "",
    `# \`${schema.name}\` ${schema.version}: API reference`,
    "",
    cell(schema.description),
    "",
  ];
  for (const module of modules) {
    pages.set(`${module}.md`, modulePage(schema, module));
    const resources = Object.keys(schema.resources).filter((t) => parts(t)[0] === module);
    index.push(
      `- [\`${module}\`](${module}.md): ${resources.map((t) => `[${parts(t)[1]}](${module}.md#${anchor(parts(t)[1])})`).join(", ") || "types only"}`,
    );
  }
  pages.set("index.md", `${index.join("\n")}\n`);
  return pages;
}
