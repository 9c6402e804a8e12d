import * as fs from "node:fs";
import * as path from "node:path";
import { parse } from "yaml";

/** The `klutch:` settings of a committed stack file, keys without the namespace. */
export function stackSettings(stack: string): Record<string, any> {
  const doc = parse(fs.readFileSync(path.join(__dirname, "../../stacks", `Pulumi.${stack}.yaml`), "utf8"));
  return Object.fromEntries(
    Object.entries(doc.config as Record<string, unknown>).map(([k, v]) => [k.replace(/^klutch:/, ""), v]),
  );
}
