import type { NetworkPathObject } from "../lib/bridge/model";
import { BRIDGE_PROGRAMS } from "../network/plugins/bridge-programs";
import { isImplementationName, unsupportedImplementation } from "../network/registry";
import type { Target } from "../network/proxy/model/target";

export type { Target } from "../network/proxy/model/target";

/**
 * The Pulumi program of one group (a consumer namespace and implementation), from the
 * implementation's own folder (network/<implementation>/bridge-program.ts, listed in
 * network/plugins/bridge-programs.ts). An implementation no bridge realises fails the group's
 * update with a message naming the ones it does.
 */
export function groupProgram(
  group: string,
  paths: NetworkPathObject[],
  target: Target,
): () => Promise<Record<string, unknown>> {
  const implementation = group.slice(group.lastIndexOf("/") + 1);
  const program = isImplementationName(implementation) ? BRIDGE_PROGRAMS[implementation] : undefined;
  if (!program) return () => Promise.reject(new Error(unsupportedImplementation(implementation)));
  return program(group, paths, target);
}
