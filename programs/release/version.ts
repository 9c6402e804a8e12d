import * as fs from "node:fs";
import * as path from "node:path";
import { repoRoot } from "../../host/automation/toolchain";

/** The release's one version: package.json's (the schema's and every SDK's too). */
export function releaseVersion(root = repoRoot): string {
  return (JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { version: string })
    .version;
}
