import { groupImplementation } from "../../../lib/bridge/grouping";
import { internalConsumers, nodePortHost, picksNodeHost } from "../../../lib/bridge/node-host";
import { groupSettings, targetWithSettings } from "../../../network/group-settings";
import { groupPorts, placeGroup, type Slots } from "../../../lib/bridge/slots";
import type { NetworkPathObject } from "../../../lib/bridge/model";
import type { BridgeTarget as Target } from "../../../network/contract/bridge-target";
import type { PortRange } from "../../../lib/net/port-range";
import { implementationSpec } from "../../../network/registry";
import type { BridgeLayout, GroupPlan } from "./model";

/**
 * The ports the bridge gives a local group for these paths (its implementation's localPorts, as
 * programs/bridge/stack-runner.ts portsNeeded counts them, placed by programs/bridge/slot-store.ts with lib/bridge/slots.ts), without claiming
 * them: a new group's slots, or slots a group would grow into, are a prediction. `slots` is
 * what the bridge's slots file holds now.
 */
export function localGroupRange(
  bridge: BridgeLayout,
  slots: Slots,
  key: string,
  paths: NetworkPathObject[],
): { range: PortRange; reserved: number[]; predictedSlot: boolean } {
  const size = bridge.slotSize;
  const maxSlots = Math.floor((bridge.portRange.to - bridge.portRange.from + 1) / size);
  const ports = implementationSpec(groupImplementation(key))?.localPorts?.(paths) ?? 0;
  const blocks = placeGroup(slots, key, ports, {
    slotSize: size,
    maxSlots,
    maxSlotsPerGroup: Math.max(1, Math.floor((bridge.maxPortsPerGroup ?? maxSlots * size) / size)),
  });
  const { range, reserved } = groupPorts(bridge.portRange, blocks, size);
  return { range, reserved, predictedSlot: JSON.stringify(slots[key]) !== JSON.stringify(blocks) };
}

/**
 * The target the bridge builds this group with (programs/bridge/stack-runner.ts targetFor): locally a port
 * block placed as the bridge places it; on a cluster its flags overlaid with the consumer
 * namespace's settings for the group's implementation (network/group-settings.ts). What the preview assumes is pushed onto `notes`.
 */
export function groupTarget(bridge: BridgeLayout, slots: Slots, g: GroupPlan, notes: string[]): Target {
  const base = bridge.target;
  if (base.kind === "local") {
    const { range, reserved, predictedSlot } = localGroupRange(bridge, slots, g.key, g.after);
    if (predictedSlot)
      notes.push(
        `group ${g.key}: its ports ${range.from}-${range.to}${reserved.length > 0 ? ` (less ${reserved.length} of other groups between its slots)` : ""} are where the bridge would place them now (new or grown)`,
      );
    return { ...base, portRange: range, reservedPorts: reserved };
  }
  const own = groupSettings(bridge.settings?.value, g.key);
  const implementation = groupImplementation(g.key);
  notes.push(
    `group ${g.key}: previewed on the kubernetes target (namespace ${base.namespace}), ` +
      (own !== undefined
        ? `with its ${bridge.settings?.from === "planned" ? "planned" : "current"} ${implementation} settings`
        : `with the bridge's flags (no ${implementation} settings for its namespace)`),
  );
  // What the bridge reads before the run and the preview cannot, the implementation stands in for.
  const withSettings = targetWithSettings(base, bridge.settings?.value, g.key);
  const spec = implementationSpec(implementation);
  const target =
    spec?.previewTarget?.(withSettings, g.after, (line) => notes.push(`group ${g.key}: ${line}`)) ??
    withSettings;
  if (!picksNodeHost(target) || !bridge.nodes) return target;
  const nodeHost = nodePortHost(bridge.nodes, internalConsumers(target));
  if (!nodeHost) return target;
  notes.push(`group ${g.key}: its NodePort proxy reports ${nodeHost}, the node the bridge would pick now`);
  return { ...target, nodeHost };
}
