/** Writes provider/schema.json from provider/catalog.ts (`npm run provider:schema`). */
import { writeSchema } from "./schema-file";

writeSchema();
