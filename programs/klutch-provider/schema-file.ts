import * as fs from "node:fs";
import * as path from "node:path";
import { KLUTCH_PACKAGE } from "./catalog";
import { apiReference, type ReferenceSchema } from "./api-reference";
import { packageIndex } from "./package-index";
import { packageSchema } from "../../providers/kit/schema-model";

/** Where the generated schema is committed; `npm run provider:schema` writes it. */
export const SCHEMA_FILE = path.join(__dirname, "schema.json");

/** Where the API reference generated from it is committed (api-reference.ts). */
export const API_REFERENCE_DIR = path.join(__dirname, "..", "..", "docs", "api");

/** The package's front page (package-index.ts), beside installation-configuration.md. */
export const PACKAGE_INDEX_FILE = path.join(__dirname, "..", "..", "docs", "_index.md");

/** The examples of every language (examples/<example>/<language>). */
const EXAMPLES_DIR = path.join(__dirname, "..", "..", "examples");

/** The text of docs/_index.md as generated from the schema and the examples. */
export function packageIndexText(): string {
  const schema = packageSchema(KLUTCH_PACKAGE) as { displayName: string; description: string };
  return packageIndex(schema, (file) => fs.readFileSync(path.join(EXAMPLES_DIR, file), "utf8"));
}

/** The text of schema.json as generated from programs/klutch-provider/catalog.ts. */
export function schemaText(): string {
  return `${JSON.stringify(packageSchema(KLUTCH_PACKAGE), null, 2)}\n`;
}

/** The API reference's pages as generated from the schema, by file name. */
export function apiReferencePages(): Map<string, string> {
  return apiReference(packageSchema(KLUTCH_PACKAGE) as unknown as ReferenceSchema);
}

/** Writes schema.json from the catalog, and the API reference and front page from it. */
export function writeSchema(): void {
  fs.writeFileSync(SCHEMA_FILE, schemaText());
  console.log(`wrote ${SCHEMA_FILE}`);
  fs.rmSync(API_REFERENCE_DIR, { recursive: true, force: true });
  fs.mkdirSync(API_REFERENCE_DIR, { recursive: true });
  for (const [name, text] of apiReferencePages()) fs.writeFileSync(path.join(API_REFERENCE_DIR, name), text);
  console.log(`wrote ${API_REFERENCE_DIR}`);
  fs.writeFileSync(PACKAGE_INDEX_FILE, packageIndexText());
  console.log(`wrote ${PACKAGE_INDEX_FILE}`);
}
