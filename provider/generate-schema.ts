/** Writes provider/schema.json from provider/catalog.ts (`npm run provider:schema`). */
import * as fs from "node:fs";
import { SCHEMA_FILE, schemaText } from "./schema-file";

fs.writeFileSync(SCHEMA_FILE, schemaText());
console.log(`wrote ${SCHEMA_FILE}`);
