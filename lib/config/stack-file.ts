import * as fs from "node:fs";
import * as path from "node:path";
import { parse } from "yaml";
import { repoRoot } from "../toolchain";

interface ClusterEntry {
  name?: unknown;
  infrastructure?: unknown;
}

/** Path of a stack's config file (`stackConfigDir: stacks` in Pulumi.yaml). */
export function stackFilePath(stack: string): string {
  return path.join(repoRoot, "stacks", `Pulumi.${stack}.yaml`);
}

/**
 * Names of the clusters a stack runs on local infrastructure (control plane first), read
 * straight from the stack file so the local-clusters command and `pulumi up` agree on them.
 */
export function readLocalClusterNames(stack: string): string[] {
  const file = stackFilePath(stack);
  if (!fs.existsSync(file)) {
    throw new Error(`stack config ${file} does not exist; pass the cluster names explicitly`);
  }
  const doc = (parse(fs.readFileSync(file, "utf8")) ?? {}) as { config?: Record<string, unknown> };
  const config = doc.config ?? {};
  const controlPlane = (config["klutch:controlPlane"] ?? {}) as ClusterEntry;
  const appClusters = (config["klutch:appClusters"] ?? []) as ClusterEntry[];
  return [controlPlane, ...appClusters]
    .filter((c) => c.infrastructure === "local" && typeof c.name === "string")
    .map((c) => c.name as string);
}
