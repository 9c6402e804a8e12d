/**
 * The status the bridge writes on a NetworkPath (conditions as Kubernetes wants them) and the
 * Event that reports it. Pure.
 */

import type { Condition, NetworkPathObject, PathEndpoint, PathProblem } from "./api";

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
  endpoint: PathEndpoint,
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
  problem: Pick<PathProblem, "message"> & { reason: string },
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
 * The status of a path whose objects in the data plane someone changed or deleted (drift,
 * lib/bridge/drift.ts): Ready=False until the run that puts them back reports, so no one takes
 * a path whose proxy is gone for a working one. The endpoint stays: the run keeps it.
 */
export function driftStatus(
  p: NetworkPathObject,
  message: string,
  now: string,
): NonNullable<NetworkPathObject["status"]> {
  return {
    ...(p.status?.hostForConsumer !== undefined ? { hostForConsumer: p.status.hostForConsumer } : {}),
    ...(p.status?.port !== undefined ? { port: p.status.port } : {}),
    ...problemStatus(p, { reason: "DriftDetected", message }, now),
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
  reason = "ReconcileError",
): NonNullable<NetworkPathObject["status"]> {
  const prev = p.status?.conditions;
  const generation = p.metadata.generation;
  const message = error.length > 1000 ? `${error.slice(0, 997)}...` : error;
  const wasReady = prev?.find((c) => c.type === "Ready");
  const ready =
    wasReady?.status === "True" && p.status?.hostForConsumer
      ? wasReady
      : condition("Ready", "False", reason, message, now, prev, generation);
  return {
    ...(p.status?.hostForConsumer ? { hostForConsumer: p.status.hostForConsumer } : {}),
    ...(p.status?.port ? { port: p.status.port } : {}),
    ...(p.status?.observedGeneration !== undefined
      ? { observedGeneration: p.status.observedGeneration }
      : {}),
    conditions: [ready, condition("Synced", "False", reason, message, now, prev, generation)],
  };
}

/**
 * The Event that reports a path's new status (see programs/bridge/events.ts): Normal PathReady when it
 * works, else a Warning with the reason its Ready (or Synced) condition gives.
 */
export function statusEvent(status: NonNullable<NetworkPathObject["status"]>): {
  type: "Normal" | "Warning";
  reason: "PathReady" | "ProbeFailed" | "ReconcileError" | "NodePortAllocated" | PathProblem["reason"];
  message: string;
} {
  const ready = status.conditions?.find((c) => c.type === "Ready");
  const synced = status.conditions?.find((c) => c.type === "Synced");
  if (synced?.status === "False") {
    const reason =
      synced.reason === "PortRangeExhausted" ||
      synced.reason === "InvalidConnection" ||
      synced.reason === "ForwarderFailed" ||
      synced.reason === "HostUnresolved" ||
      synced.reason === "NodePortAllocated"
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
