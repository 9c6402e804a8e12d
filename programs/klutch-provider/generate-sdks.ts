/**
 * Writes programs/klutch-provider/schema.json from programs/klutch-provider/catalog.ts, then the SDKs generated from it into
 * sdk/<language> (`npm run provider:sdks`). The generator is the toolchain's
 * klutch-gen-sdk (host/toolchain/gen-sdk/main.go), built on first use.
 */
import { writeSchema } from "./schema-file";
import { SDK_DIR, generateSdks } from "./sdk-files";

writeSchema();
process.stdout.write(generateSdks(SDK_DIR));
