/**
 * Leader election over a coordination.k8s.io/v1 Lease, as client-go does it: the holder
 * renews `renewTime` every retry period; anyone may take the lease once it has not seen the
 * lease change for `leaseDurationSeconds` of its OWN clock; a holder that could not renew
 * within its renew deadline (shorter than the lease duration) stops before anyone can take
 * over, so two bridges never run the same group's Pulumi stack at once. Pure: the decisions only.
 *
 * Why the local clock (client-go, tools/leaderelection/leaderelection.go: `observedRecord`,
 * `observedTime`, and `tryAcquireOrRenew`'s `le.observedTime.Add(leaseDuration).After(now)`):
 * `renewTime` is written by the holder's clock. A holder whose clock runs behind would look
 * expired to everyone at once (two leaders); one whose clock runs ahead would never expire.
 * Judging "how long since the record last changed" by the observer's clock alone is immune
 * to skew between machines; only the rate of the clocks matters.
 */

/** The Lease replicas of the bridge elect their leader with (`--leader-elect`). */
export const LEADER_LEASE = "klutch-bridge";

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

export type LeaseDecision = "create" | "renew" | "takeover" | "wait";

export interface LeaseTiming {
  /** How long a lease is good for after its last renewal. */
  leaseDurationSeconds: number;
  /** A leader that has not renewed for this long gives up; must be below the duration. */
  renewDeadlineSeconds: number;
  /** How often to try to acquire or renew. */
  retryPeriodSeconds: number;
}

export const DEFAULT_TIMING: LeaseTiming = {
  leaseDurationSeconds: 15,
  renewDeadlineSeconds: 10,
  retryPeriodSeconds: 2,
};

export function timingProblem(t: LeaseTiming): string | undefined {
  if (!(t.retryPeriodSeconds > 0)) return "the retry period must be positive";
  if (!(t.renewDeadlineSeconds > t.retryPeriodSeconds))
    return "the renew deadline must be longer than the retry period";
  if (!(t.leaseDurationSeconds > t.renewDeadlineSeconds))
    return "the lease duration must be longer than the renew deadline, or an old leader could still be working when a new one starts";
  return undefined;
}

/** The lease record as last seen, and when (by this process's clock) it was first seen so. */
export interface LeaseObservation {
  /** The record's fields, serialized: any change (a renewal, a new holder) makes a new observation. */
  record: string;
  /** Local time (ms) at which this record was first observed. */
  observedAt: number;
}

/**
 * Records what was read: a record that differs from the last observation restarts the clock
 * at `nowMs` (local time); the same record keeps the time it was first seen.
 */
export function observeLease(
  previous: LeaseObservation | undefined,
  spec: LeaseSpec | undefined,
  nowMs: number,
): LeaseObservation {
  const record = JSON.stringify([
    spec?.holderIdentity ?? "",
    spec?.leaseDurationSeconds ?? 0,
    spec?.acquireTime ?? "",
    spec?.renewTime ?? "",
    spec?.leaseTransitions ?? 0,
  ]);
  return previous && previous.record === record ? previous : { record, observedAt: nowMs };
}

/**
 * What `me` may do with the lease as it is now (undefined: there is none yet). `observed` is
 * this process's observation of the same record (observeLease); its holder's lease expires
 * `leaseDurationSeconds` after the record was first seen unchanged, whatever `renewTime` says.
 */
export function leaseDecision(
  spec: LeaseSpec | undefined,
  me: string,
  now: Date,
  observed: LeaseObservation,
): LeaseDecision {
  if (!spec) return "create";
  if (spec.holderIdentity === me) return "renew";
  if (!spec.holderIdentity) return "takeover";
  const duration = (spec.leaseDurationSeconds ?? 0) * 1000;
  if (observed.observedAt + duration < now.getTime()) return "takeover";
  return "wait";
}

/** Kubernetes MicroTime: RFC 3339 with microseconds. */
export function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

/** The spec to write for a decision that is not "wait". */
export function nextLeaseSpec(
  current: LeaseSpec | undefined,
  me: string,
  now: Date,
  decision: Exclude<LeaseDecision, "wait">,
  timing: LeaseTiming = DEFAULT_TIMING,
): LeaseSpec {
  const stamp = microTime(now);
  const changesHands = decision !== "renew";
  return {
    holderIdentity: me,
    leaseDurationSeconds: timing.leaseDurationSeconds,
    acquireTime: changesHands ? stamp : (current?.acquireTime ?? stamp),
    renewTime: stamp,
    leaseTransitions: (current?.leaseTransitions ?? 0) + (decision === "takeover" ? 1 : 0),
  };
}
