import { admitConnections } from "../../network/proxy/model/admission";
import { groupImplementation } from "../../lib/bridge/grouping";
import { internalConsumers, nodePortHost, picksNodeHost } from "../../lib/bridge/node-host";
import { groupSettings, targetWithSettings } from "../../network/group-settings";
import { groupPorts, placeGroup, type Slots } from "../../lib/bridge/slots";
import type { NetworkPathObject } from "../../lib/bridge/model";
import { toConnection } from "../../network/proxy/model/target";
import type { BridgeTarget as Target } from "../../network/contract/bridge-target";
import { listenerKeys, type PortRange } from "../../network/proxy/model/types";
import type { BridgeLayout, GroupPlan } from "./model";

/**
 * The ports the bridge gives a local group for these paths (bridge/stack-runner.ts
 * portsNeeded, placed by bridge/slot-store.ts with lib/bridge/slots.ts), without claiming
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
  const ports = listenerKeys(admitConnections(paths.map(toConnection)).admitted).length + 2;
  const blocks = placeGroup(slots, key, ports, {
    slotSize: size,
    maxSlots,
    maxSlotsPerGroup: Math.max(1, Math.floor((bridge.maxPortsPerGroup ?? maxSlots * size) / size)),
  });
  const { range, reserved } = groupPorts(bridge.portRange, blocks, size);
  return { range, reserved, predictedSlot: JSON.stringify(slots[key]) !== JSON.stringify(blocks) };
}

/**
 * The target the bridge builds this group with (bridge/stack-runner.ts targetFor): locally a port
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
  const target = targetWithSettings(base, bridge.settings?.value, g.key);
  if (!picksNodeHost(target) || !bridge.nodes) return target;
  const nodeHost = nodePortHost(bridge.nodes, internalConsumers(target));
  if (!nodeHost) return target;
  notes.push(`group ${g.key}: its NodePort proxy reports ${nodeHost}, the node the bridge would pick now`);
  return { ...target, nodeHost };
}
