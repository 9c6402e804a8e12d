/**
 * Pure decisions of the Crossplane bridge: which Pulumi stack a NetworkPath belongs to,
 * what a stack must contain, what status to write back, and how long to wait after a
 * failure. No Kubernetes client and no Pulumi here, so every rule is tested directly.
 */

import { realisationOf } from "../../network/registry";
import { createHash } from "node:crypto";
import { connectionProblems } from "../../network/proxy/haproxy-config";
import { sniServerName, type PortRange, type ProxyConnection } from "../../network/proxy/types";

export const NETWORK_PATH_GROUP = "klutch.anynines.com";
export const NETWORK_PATH_VERSION = "v1alpha1";
export const NETWORK_PATH_PLURAL = "networkpaths";
/** Held on every NetworkPath the bridge realised, until its path is gone. */
export const BRIDGE_FINALIZER = "klutch.anynines.com/network-path";

export interface Condition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

/** The fields of a NetworkPath the bridge reads. */
export interface NetworkPathObject {
  metadata: {
    name: string;
    uid?: string;
    generation?: number;
    deletionTimestamp?: string;
    finalizers?: string[];
    resourceVersion?: string;
  };
  spec: {
    implementation: string;
    connection: string;
    /** The claim's namespace; absent for an XTCPConnection made without a claim. */
    consumerNamespace?: string;
    instanceHost: string;
    port: number;
    enhancements?: Record<string, unknown>[];
  };
  status?: {
    hostForConsumer?: string;
    port?: number;
    observedGeneration?: number;
    conditions?: Condition[];
  };
}

/**
 * Why one path of a group is not realised while the others are (reported on that path
 * only, as Ready=False and Synced=False with this reason).
 */
export interface PathProblem {
  reason: "PortRangeExhausted" | "InvalidConnection";
  message: string;
}

export interface Endpoint {
  hostForConsumer: string;
  port: number;
  /** Set when the program probed the endpoint; a failed probe makes the path Ready=False. */
  probe?: { ready: boolean; reason: string; message: string };
}

// How each implementation is realised is the registry's (network/registry.ts) to say.
export type { Realisation } from "../../network/implementation";
export { realisationOf, unsupportedImplementation } from "../../network/registry";
/** Whether the bridge reconciles a path at all (NOOP markers are left alone: no finalizer, no status). */
export function isManaged(p: Pick<NetworkPathObject, "spec">): boolean {
  return realisationOf(p.spec.implementation) !== "ignored";
}

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

function condition(
  type: string,
  status: Condition["status"],
  reason: string,
  message: string,
  now: string,
  previous: Condition[] | undefined,
  generation: number | undefined,
): Condition {
  const prior = previous?.find((c) => c.type === type);
  // The transition time moves only when the status does, as Kubernetes conditions require.
  const lastTransitionTime = prior && prior.status === status ? prior.lastTransitionTime : now;
  return {
    type,
    status,
    reason,
    message,
    lastTransitionTime,
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
}

/** The status of a path whose network path is in place (Ready=False when its probe failed). */
export function readyStatus(
  p: NetworkPathObject,
  endpoint: Endpoint,
  now: string,
): NonNullable<NetworkPathObject["status"]> {
  const prev = p.status?.conditions;
  const generation = p.metadata.generation;
  const ready =
    endpoint.probe && !endpoint.probe.ready
      ? condition("Ready", "False", endpoint.probe.reason, endpoint.probe.message, now, prev, generation)
      : condition(
          "Ready",
          "True",
          "ConnectivityEstablished",
          `TCP connection available at ${endpoint.hostForConsumer}:${endpoint.port}`,
          now,
          prev,
          generation,
        );
  return {
    hostForConsumer: endpoint.hostForConsumer,
    port: endpoint.port,
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    conditions: [
      ready,
      condition(
        "Synced",
        "True",
        "ReconcileSuccess",
        "The network path matches the spec",
        now,
        prev,
        generation,
      ),
    ],
  };
}

/**
 * The status of a path the group left out (no port left, or a connection the proxy cannot
 * serve): Ready=False and Synced=False with the reason, no endpoint. Its group's other
 * paths are unaffected.
 */
export function problemStatus(
  p: NetworkPathObject,
  problem: PathProblem,
  now: string,
): NonNullable<NetworkPathObject["status"]> {
  const prev = p.status?.conditions;
  const generation = p.metadata.generation;
  return {
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    conditions: [
      condition("Ready", "False", problem.reason, problem.message, now, prev, generation),
      condition("Synced", "False", problem.reason, problem.message, now, prev, generation),
    ],
  };
}

/**
 * Splits a group's connections into those the proxy can serve and those it cannot (an
 * instanceHost that is no host name, a bad port, a TLS server name another connection
 * already uses), so one bad connection never fails the whole group's proxy. A host name
 * that does not resolve is admitted: HAProxy starts that server without an address (see
 * renderHaproxyConfig) and only that connection is down.
 */
export function admitConnections(connections: readonly ProxyConnection[]): {
  admitted: ProxyConnection[];
  rejected: Record<string, PathProblem>;
} {
  const admitted: ProxyConnection[] = [];
  const rejected: Record<string, PathProblem> = {};
  const serverNames = new Map<string, string>();
  for (const c of connections) {
    const own = connectionProblems([c]).map((m) => m.replace(/^connections\[0\]\.?/, "spec."));
    const sni = sniServerName(c);
    const holder = sni === undefined ? undefined : serverNames.get(sni);
    if (holder !== undefined)
      own.push(
        `spec.enhancements: tlsSNI serverName "${sni}" is already used by ${holder}; names must be unique`,
      );
    if (own.length > 0) {
      rejected[c.id] = { reason: "InvalidConnection", message: own.join("; ") };
      continue;
    }
    if (sni !== undefined) serverNames.set(sni, c.id);
    admitted.push(c);
  }
  return { admitted, rejected };
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
): PathProblem {
  const size = range.to - range.from + 1;
  const usable = size - ownListeners;
  const fix =
    target === "local"
      ? `raise the bridge's --slot-size (ports per group; now ${size}) to at least ${needed + ownListeners}, or remove ${needed - usable} of the group's connections`
      : `widen the app cluster's networkConnector.portRange (or the bridge's --port-range) to at least ${needed + ownListeners} ports, or remove ${needed - usable} of the group's connections`;
  const own = ownListeners > 0 ? ` (${ownListeners} of them the proxy's own listeners)` : "";
  return {
    reason: "PortRangeExhausted",
    message: `no port left for this connection: group ${group} has port range ${range.from}-${range.to}, ${size} ports${own}, and ${needed} connections need one; ${fix}`,
  };
}

/**
 * The status of a path whose reconcile failed: Synced=False with the error. An endpoint
 * that worked before stays reported (and Ready stays as it was) because the old path is
 * still in place; a path that never worked is Ready=False.
 */
export function failedStatus(
  p: NetworkPathObject,
  error: string,
  now: string,
): NonNullable<NetworkPathObject["status"]> {
  const prev = p.status?.conditions;
  const generation = p.metadata.generation;
  const message = error.length > 1000 ? `${error.slice(0, 997)}...` : error;
  const wasReady = prev?.find((c) => c.type === "Ready");
  const ready =
    wasReady?.status === "True" && p.status?.hostForConsumer
      ? wasReady
      : condition("Ready", "False", "ReconcileError", message, now, prev, generation);
  return {
    ...(p.status?.hostForConsumer ? { hostForConsumer: p.status.hostForConsumer } : {}),
    ...(p.status?.port ? { port: p.status.port } : {}),
    ...(p.status?.observedGeneration !== undefined
      ? { observedGeneration: p.status.observedGeneration }
      : {}),
    conditions: [ready, condition("Synced", "False", "ReconcileError", message, now, prev, generation)],
  };
}

/**
 * The Event that reports a path's new status (see bridge/events.ts): Normal PathReady when it
 * works, else a Warning with the reason its Ready (or Synced) condition gives.
 */
export function statusEvent(status: NonNullable<NetworkPathObject["status"]>): {
  type: "Normal" | "Warning";
  reason: "PathReady" | "ProbeFailed" | "ReconcileError" | "PortRangeExhausted" | "InvalidConnection";
  message: string;
} {
  const ready = status.conditions?.find((c) => c.type === "Ready");
  const synced = status.conditions?.find((c) => c.type === "Synced");
  if (synced?.status === "False") {
    const reason =
      synced.reason === "PortRangeExhausted" || synced.reason === "InvalidConnection"
        ? synced.reason
        : "ReconcileError";
    return { type: "Warning", reason, message: synced.message };
  }
  if (ready?.status === "True") return { type: "Normal", reason: "PathReady", message: ready.message };
  return { type: "Warning", reason: "ProbeFailed", message: ready?.message ?? "not ready" };
}

/** What makes two Events the same for aggregation (client-go's key: object, type, reason, message). */
export function eventKey(
  p: Pick<NetworkPathObject, "metadata">,
  type: string,
  reason: string,
  message: string,
): string {
  return JSON.stringify([p.metadata.uid ?? p.metadata.name, type, reason, message]);
}

/** Whether the status written last already says what `next` says (no write needed). */
export function sameStatus(
  current: NetworkPathObject["status"],
  next: NonNullable<NetworkPathObject["status"]>,
): boolean {
  const strip = (s: NetworkPathObject["status"]) =>
    JSON.stringify({
      ...s,
      conditions: (s?.conditions ?? []).map(({ lastTransitionTime: _t, ...rest }) => rest),
    });
  return strip(current) === strip(next);
}

/**
 * Exponential backoff with full jitter: attempt 1 waits up to `base`, doubling to `max`.
 * `random` is injectable so the schedule is testable.
 */
export function backoffDelay(
  attempt: number,
  base = 1000,
  max = 60_000,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(max, base * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/**
 * Port ranges for the local target: every group's proxy runs on this one machine, so each
 * group gets its own slice of the bridge's port range. Slots are stable (recorded by the
 * caller) and the lowest free one is taken; a slot is free again once its group is gone.
 */
export function assignSlot(slots: Readonly<Record<string, number>>, key: string, maxSlots: number): number {
  const existing = slots[key];
  if (existing !== undefined) return existing;
  const used = new Set(Object.values(slots));
  for (let i = 0; i < maxSlots; i++) if (!used.has(i)) return i;
  throw new Error(
    `no free port slot for ${key}: all ${maxSlots} slots of the bridge's port range are in use; widen --port-range`,
  );
}

export function slotRange(
  base: { from: number; to: number },
  slot: number,
  size: number,
): { from: number; to: number } {
  const from = base.from + slot * size;
  const to = from + size - 1;
  if (to > base.to)
    throw new Error(`slot ${slot} (${from}-${to}) lies outside the port range ${base.from}-${base.to}`);
  return { from, to };
}

/**
 * The bridge's own permissions on the control plane: NetworkPaths (read, finalizers) and
 * their status, and events. It touches nothing else there; what it builds lives in the
 * data plane, through the data plane's own credentials.
 */
/**
 * The bridge's rights in its own namespace: read the environment's settings ConfigMap, and
 * hold the leader Lease. RBAC cannot limit `create` by name, so creating leases is granted
 * namespace-wide; reading and renewing only the one Lease.
 */
export function bridgeNamespaceRules(
  settingsConfigMap: string,
  lease: string,
): { apiGroups: string[]; resources: string[]; resourceNames?: string[]; verbs: string[] }[] {
  return [
    { apiGroups: [""], resources: ["configmaps"], resourceNames: [settingsConfigMap], verbs: ["get"] },
    { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create"] },
    {
      apiGroups: ["coordination.k8s.io"],
      resources: ["leases"],
      resourceNames: [lease],
      verbs: ["get", "update"],
    },
  ];
}

export function bridgeRules(): { apiGroups: string[]; resources: string[]; verbs: string[] }[] {
  return [
    {
      apiGroups: [NETWORK_PATH_GROUP],
      resources: [NETWORK_PATH_PLURAL],
      verbs: ["get", "list", "watch", "patch", "update"],
    },
    {
      apiGroups: [NETWORK_PATH_GROUP],
      resources: [`${NETWORK_PATH_PLURAL}/status`],
      verbs: ["get", "patch", "update"],
    },
    { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
  ];
}

/**
 * Whether a watch event calls for a reconcile. The bridge's own status writes come back as
 * MODIFIED events; reacting to them would bypass the backoff of a failing group and spin.
 * A spec change bumps the generation; deletion and finalizers are metadata changes.
 */
export function needsReconcile(previous: NetworkPathObject | undefined, next: NetworkPathObject): boolean {
  if (!previous) return true;
  return (
    previous.metadata.generation !== next.metadata.generation ||
    previous.metadata.deletionTimestamp !== next.metadata.deletionTimestamp ||
    hasFinalizer(previous) !== hasFinalizer(next)
  );
}

/** A file-backend stack lock: who holds it. */
export interface StackLock {
  file: string;
  pid?: number;
  hostname?: string;
}

/**
 * Locks left by an update whose process is gone (a bridge killed mid-update leaves one),
 * which are safe to clear; a lock held by a live process on this host is not, nor one of
 * another host (a replica sharing the backend). A lock file that does not parse at all (no
 * pid, no host) is stale too: the backend writes locks whole (write beside, rename), so only
 * a broken file looks like that, and keeping it would block its stack forever.
 */
export function staleLocks(
  locks: StackLock[],
  hostname: string,
  alive: (pid: number) => boolean,
): StackLock[] {
  return locks.filter(
    (l) =>
      (l.pid === undefined && l.hostname === undefined) ||
      (l.hostname === hostname && l.pid !== undefined && !alive(l.pid)),
  );
}
