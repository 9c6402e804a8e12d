import { admitConnections } from "../../../network/proxy/model/admission";
import { groupImplementation } from "../../../lib/bridge/grouping";
import { internalConsumers, nodePortHost, picksNodeHost } from "../../../lib/bridge/node-host";
import { groupSettings, targetWithSettings } from "../../../network/group-settings";
import { groupPorts, placeGroup, type Slots } from "../../../lib/bridge/slots";
import type { NetworkPathObject } from "../../../lib/bridge/model";
import { toConnection } from "../../../network/proxy/model/target";
import { backendKey, instanceTargetOf } from "../../../network/proxy/model/kernel-path";
import type { BridgeTarget as Target } from "../../../network/contract/bridge-target";
import { listenerKeys, type PortRange } from "../../../network/proxy/model/types";
import type { BridgeLayout, GroupPlan } from "./model";

/**
 * The ports the bridge gives a local group for these paths (programs/bridge/stack-runner.ts
 * portsNeeded, placed by programs/bridge/slot-store.ts with lib/bridge/slots.ts), without claiming
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
  const target = withStandInBackends(targetWithSettings(base, bridge.settings?.value, g.key), g, notes);
  if (!picksNodeHost(target) || !bridge.nodes) return target;
  const nodeHost = nodePortHost(bridge.nodes, internalConsumers(target));
  if (!nodeHost) return target;
  notes.push(`group ${g.key}: its NodePort proxy reports ${nodeHost}, the node the bridge would pick now`);
  return { ...target, nodeHost };
}

/** TEST-NET-1 (RFC 5737): never routed, so a stand-in can never be mistaken for an instance. */
const STAND_IN = "192.0.2.1";

/**
 * A kernel path's EndpointSlices name its instances' ready endpoints, which the bridge reads
 * before each run (programs/bridge/instance-backends.ts) and the preview does not: each instance
 * Service a path names stands in with one TEST-NET address, so the preview shows the
 * Service's port and one slice per path, and says so.
 */
function withStandInBackends<T extends Extract<Target, { kind: "kubernetes" }>>(
  target: T,
  g: GroupPlan,
  notes: string[],
): T {
  if (target.hop !== "kernel" || target.backends) return target;
  const backends: NonNullable<T["backends"]> = {};
  for (const c of admitConnections(g.after.map(toConnection)).admitted) {
    if (instanceTargetOf(c.instanceHost).kind !== "service") continue;
    backends[backendKey(c.instanceHost, c.port)] = { backends: [{ address: STAND_IN, port: c.port }] };
  }
  if (Object.keys(backends).length > 0)
    notes.push(
      `group ${g.key}: a kernel path; its EndpointSlices show ${STAND_IN} for each instance Service, whose ready endpoints the bridge reads when it runs`,
    );
  return { ...target, backends };
}
