import type { GroupProgram } from "../contract/bridge-target";
import { groupImplementation } from "../../lib/bridge/grouping";
import { implementationSpec } from "../registry";

/**
 * The bridge's program for a group, from its implementation's spec (`pulumi.bridge`, loaded on
 * first use: the bridge loads the programs of the implementations it meets, never an
 * environment side and so never a cloud SDK). Undefined for an implementation no bridge realises.
 */
export function bridgeProgramOf(group: string): GroupProgram | undefined {
  return implementationSpec(groupImplementation(group))?.pulumi.bridge?.();
}
