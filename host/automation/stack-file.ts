import * as fs from "node:fs";
import * as path from "node:path";
import { parse } from "yaml";
import { repoRoot } from "./toolchain";

interface ClusterEntry {
  name?: unknown;
  infrastructure?: unknown;
  nodes?: unknown;
  network?: { podCidr?: unknown };
}

/** A local cluster as the stack file describes it: its name, whether it has a node, and the node's pod CIDR. */
export interface LocalClusterEntry {
  name: string;
  nodes: number;
  podCidr?: string;
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
  return readLocalClusters(stack).map((c) => c.name);
}

/** The local clusters of a stack (control plane first) with their node settings. */
export function readLocalClusters(stack: string): LocalClusterEntry[] {
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
    .map((c) => ({
      name: c.name as string,
      nodes: typeof c.nodes === "number" ? c.nodes : 0,
      ...(typeof c.network?.podCidr === "string" ? { podCidr: c.network.podCidr } : {}),
    }));
}

/** What `LocalClusters.up` is asked for a stack: each local cluster, with a node where it has one. */
export function localClusterRequests(
  stack: string,
): { name: string; nodes: number; node: { podCidr?: string } }[] {
  return readLocalClusters(stack).map((c) => ({
    name: c.name,
    nodes: c.nodes,
    node: c.podCidr ? { podCidr: c.podCidr } : {},
  }));
}
