import type { NetworkPathObject } from "../../lib/bridge/model";
import type { BridgeTarget } from "../../network/contract/bridge-target";
import { groupImplementation } from "../../lib/bridge/grouping";
import { bridgeProgramOf } from "../../network/plugins/bridge-programs";
import { unsupportedImplementation } from "../../network/registry";

export type { BridgeTarget as Target } from "../../network/contract/bridge-target";

/**
 * The Pulumi program of one group (a consumer namespace and implementation), from the
 * implementation's own folder (its spec's `pulumi.bridge`, network/plugins/bridge-programs.ts).
 * An implementation no bridge realises fails the group's update with a message naming the ones
 * it does.
 */
export function groupProgram(
  group: string,
  paths: NetworkPathObject[],
  target: BridgeTarget,
): () => Promise<Record<string, unknown>> {
  const program = bridgeProgramOf(group);
  if (!program) return () => Promise.reject(new Error(unsupportedImplementation(groupImplementation(group))));
  return program(group, paths, target);
}
