/**
 * Leader election over a coordination.k8s.io/v1 Lease, as client-go does it: the holder
 * renews `renewTime` every retry period; anyone may take the lease once `renewTime` is
 * older than `leaseDurationSeconds`; a holder that could not renew within its renew
 * deadline (shorter than the lease duration) stops before anyone can take over, so two
 * bridges never run the same group's Pulumi stack at once. Pure: the decisions only.
 */

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

/** What `me` may do with the lease as it is now (undefined: there is none yet). */
export function leaseDecision(spec: LeaseSpec | undefined, me: string, now: Date): LeaseDecision {
  if (!spec) return "create";
  if (spec.holderIdentity === me) return "renew";
  if (!spec.holderIdentity) return "takeover";
  const renewed = Date.parse(spec.renewTime ?? spec.acquireTime ?? "");
  const duration = (spec.leaseDurationSeconds ?? 0) * 1000;
  if (!Number.isFinite(renewed) || renewed + duration < now.getTime()) return "takeover";
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
