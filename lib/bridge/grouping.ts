/**
 * Which stack a NetworkPath belongs to, what a group's stack must hold, which watch events call
 * for a reconcile, and how a group's connections fit its port range. Pure.
 */

import { createHash } from "node:crypto";
import type { PortRange } from "../net/port-range";
import { BRIDGE_FINALIZER, type NetworkPathObject, type PathProblem } from "./api";
import { XR_KIND } from "../connector-api/names";
import { controllerOwner } from "../kube/owner-conditions";

/** The path's identity in stacks and in the proxy's port assignments (NetworkPaths are cluster-scoped). */
export function pathId(p: Pick<NetworkPathObject, "metadata">): string {
  return p.metadata.name;
}

/** Connections made without a claim share one group per implementation. */
export const UNCLAIMED = "_unclaimed";

/**
 * Paths are grouped into one Pulumi stack per consumer namespace and implementation, so a
 * burst of connections costs one engine run, not one each, and one consumer's failure does
 * not hold up another's.
 */
export function groupKey(p: Pick<NetworkPathObject, "spec">): string {
  return `${p.spec.consumerNamespace || UNCLAIMED}/${p.spec.implementation}`;
}

/** The consumer namespace of a group key; undefined for connections made without a claim. */
export function groupNamespace(key: string): string | undefined {
  const ns = key.slice(0, key.lastIndexOf("/"));
  return ns && ns !== UNCLAIMED ? ns : undefined;
}

/** The implementation of a group key (the part after its namespace). */
export function groupImplementation(key: string): string {
  return key.slice(key.lastIndexOf("/") + 1);
}

/**
 * The field manager a group's stack applies its patches of shared objects with (the WireGuard
 * gateway's flows ConfigMap, network/wireguard/cluster-program.ts): one per group and the same
 * across re-created stacks, so the keys it applied stay its own and its drift is told by it
 * (lib/bridge/patch-drift.ts). At most 128 characters, however long the key.
 */
export function groupFieldManager(key: string): string {
  return `klutch-bridge-${createHash("sha256").update(key).digest("hex").slice(0, 16)}`;
}

/**
 * The name of a group's proxy (its Deployment and Service) in the data-plane namespace:
 * one per group, so groups never share objects; a DNS-1035 label of at most 63 characters,
 * shortened with a hash of the key when needed.
 */
export function proxyName(key: string): string {
  const cleaned = `np-${key
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")}`;
  if (cleaned.length <= 63) return cleaned;
  return `${cleaned.slice(0, 54).replace(/-+$/g, "")}-${createHash("sha256").update(key).digest("hex").slice(0, 8)}`;
}

/** A stack name for a group: lowercase, [a-z0-9-], at most 100 characters, stable. */
export function stackName(key: string): string {
  const cleaned = key
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "");
  return `np-${cleaned}`.slice(0, 100);
}

export function isDeleting(p: Pick<NetworkPathObject, "metadata">): boolean {
  return Boolean(p.metadata.deletionTimestamp);
}

export function hasFinalizer(p: Pick<NetworkPathObject, "metadata">): boolean {
  return (p.metadata.finalizers ?? []).includes(BRIDGE_FINALIZER);
}

/** What one group's stack must hold: its live paths, sorted; and which deleting paths it releases. */
export function planGroup(paths: NetworkPathObject[]): {
  live: NetworkPathObject[];
  releasing: NetworkPathObject[];
} {
  const sorted = [...paths].sort((a, b) => (pathId(a) < pathId(b) ? -1 : pathId(a) > pathId(b) ? 1 : 0));
  return {
    live: sorted.filter((p) => !isDeleting(p)),
    // Only paths that still carry our finalizer wait for us; others are already let go.
    releasing: sorted.filter((p) => isDeleting(p) && hasFinalizer(p)),
  };
}

/**
 * What a path left without a port is told: the range, how many it holds, and what to change
 * (the local target slices its --port-range by --slot-size; the kubernetes target takes the
 * app cluster's networkConnector.portRange, or the bridge's --port-range).
 */
export function portRangeExhausted(
  group: string,
  range: PortRange,
  ownListeners: number,
  needed: number,
  target: "local" | "kubernetes",
  /** Ports of the range held by other groups (a local group whose slots do not touch). */
  reserved = 0,
): PathProblem {
  const size = range.to - range.from + 1 - reserved;
  const usable = size - ownListeners;
  const fix =
    target === "local"
      ? `a group grows into free slots of the bridge's --port-range up to --max-ports-per-group: raise that (or widen --port-range) so the group can have at least ${needed + ownListeners} ports, or remove ${needed - usable} of the group's connections`
      : `widen the app cluster's networkConnector.portRange (or the bridge's --port-range) to at least ${needed + ownListeners} ports, or remove ${needed - usable} of the group's connections`;
  const own = ownListeners > 0 ? ` (${ownListeners} of them the proxy's own listeners)` : "";
  return {
    reason: "PortRangeExhausted",
    message: `no port left for this connection: group ${group} has port range ${range.from}-${range.to}, ${size} ports${reserved > 0 ? ` of its own (${reserved} between its slots are other groups')` : ""}${own}, and ${needed} connections need one; ${fix}`,
  };
}

/**
 * Whether a watch event calls for a reconcile. The bridge's own status writes come back as
 * MODIFIED events; reacting to them would bypass the backoff of a failing group and spin.
 * A spec change bumps the generation; deletion is a metadata change. Of finalizer changes only
 * the loss of ours counts (someone removed it; the reconcile puts it back): adding it is the
 * bridge's own first write to every new path, and reacting to it cost each new group a second,
 * empty engine run (seen in the trace: ~5 s of engine time per new path).
 */
export function needsReconcile(previous: NetworkPathObject | undefined, next: NetworkPathObject): boolean {
  if (!previous) return true;
  return (
    previous.metadata.generation !== next.metadata.generation ||
    previous.metadata.deletionTimestamp !== next.metadata.deletionTimestamp ||
    (hasFinalizer(previous) && !hasFinalizer(next))
  );
}

/** The annotation the bridge sets on a path's composite after writing the path's status. */
export const PATH_STATUS_ANNOTATION = "klutch.anynines.com/network-path-status-at";

/**
 * The write that makes Crossplane copy a path's new status into its composite at once: an
 * annotation on the composite (its controller owner), whose watch event starts the XR's
 * reconcile. Without it the copy waits for Crossplane's back-off (unready) or poll (Ready,
 * 30 s locally), with realtime compositions off because 1.20 can strand an XR (crossplane-plan.ts);
 * the trace measured 10.5 s of a 17.3 s create→Ready here before the nudge. The composite's
 * own reconcile reads the path as it is, so the annotation's value only needs to change.
 * Undefined for a path with no composite.
 */
export function compositeNudge(
  p: Pick<NetworkPathObject, "metadata">,
  now: string,
): { group: string; version: string; name: string; annotations: Record<string, string> } | undefined {
  const owner = controllerOwner(p.metadata);
  if (owner?.kind !== XR_KIND) return undefined;
  return {
    group: owner.group,
    version: owner.version,
    name: owner.name,
    annotations: { [PATH_STATUS_ANNOTATION]: now },
  };
}
