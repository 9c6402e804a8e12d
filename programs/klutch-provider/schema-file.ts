import * as fs from "node:fs";
import * as path from "node:path";
import { KLUTCH_PACKAGE } from "./catalog";
import { packageSchema } from "../../providers/kit/schema-model";

/** Where the generated schema is committed; `npm run provider:schema` writes it. */
export const SCHEMA_FILE = path.join(__dirname, "schema.json");

/** The text of schema.json as generated from programs/klutch-provider/catalog.ts. */
export function schemaText(): string {
  return `${JSON.stringify(packageSchema(KLUTCH_PACKAGE), null, 2)}\n`;
}

/** Writes schema.json from the catalog. */
export function writeSchema(): void {
  fs.writeFileSync(SCHEMA_FILE, schemaText());
  console.log(`wrote ${SCHEMA_FILE}`);
}
