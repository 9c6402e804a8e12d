/** Writes programs/klutch-provider/schema.json from programs/klutch-provider/catalog.ts (`npm run provider:schema`). */
import { writeSchema } from "./schema-file";

writeSchema();
