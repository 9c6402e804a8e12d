import { strict as assert } from "node:assert";
import {
  DEFAULT_TIMING,
  leaseDecision,
  microTime,
  nextLeaseSpec,
  observeLease,
  timingProblem,
  type LeaseSpec,
} from "./lease";

const T0 = new Date("2026-11-22T10:00:00.000Z");
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

describe("Crossplane bridge: leader lease (pure)", () => {
  const held: LeaseSpec = {
    holderIdentity: "bridge-a",
    leaseDurationSeconds: 15,
    acquireTime: microTime(T0),
    renewTime: microTime(T0),
    leaseTransitions: 2,
  };

  // Seen first at T0 by this process's clock.
  const seenAtT0 = observeLease(undefined, held, T0.getTime());

  it("creates a missing lease, renews its own, waits on a live rival's and takes over an expired or empty one", () => {
    const none = observeLease(undefined, undefined, T0.getTime());
    assert.equal(leaseDecision(undefined, "bridge-b", T0, none), "create");
    assert.equal(leaseDecision(held, "bridge-a", at(100), seenAtT0), "renew", "its own, even when late");
    assert.equal(leaseDecision(held, "bridge-b", at(14.9), seenAtT0), "wait");
    assert.equal(
      leaseDecision(held, "bridge-b", at(15), seenAtT0),
      "wait",
      "expiry is strictly after the duration",
    );
    assert.equal(leaseDecision(held, "bridge-b", at(15.1), seenAtT0), "takeover");
    const released = { ...held, holderIdentity: "" };
    assert.equal(
      leaseDecision(released, "bridge-b", at(1), observeLease(seenAtT0, released, at(1).getTime())),
      "takeover",
      "released",
    );
  });

  it("judges expiry by when this process saw the record change, never by the holder's renewTime (clock skew)", () => {
    // The holder's clock runs an hour behind: its renewTime looks long expired, yet it renews.
    const behind = { ...held, renewTime: microTime(at(-3600)) };
    let seen = observeLease(undefined, behind, T0.getTime());
    assert.equal(
      leaseDecision(behind, "bridge-b", at(1), seen),
      "wait",
      "a stale-looking renewTime is no expiry",
    );
    // It renews (still an hour behind): the record changed, so the clock restarts locally.
    const renewed = { ...behind, renewTime: microTime(at(-3590)) };
    seen = observeLease(seen, renewed, at(10).getTime());
    assert.equal(seen.observedAt, at(10).getTime());
    assert.equal(leaseDecision(renewed, "bridge-b", at(20), seen), "wait", "renewed 10 s ago by our clock");
    // It stops renewing: the same record read again keeps its first-seen time, and expires.
    seen = observeLease(seen, { ...renewed }, at(24).getTime());
    assert.equal(seen.observedAt, at(10).getTime());
    assert.equal(leaseDecision(renewed, "bridge-b", at(25.1), seen), "takeover");

    // The holder's clock runs an hour ahead: its renewTime lies in the future, yet the lease
    // expires once it stops changing.
    const ahead = { ...held, renewTime: microTime(at(3600)) };
    const seenAhead = observeLease(undefined, ahead, T0.getTime());
    assert.equal(leaseDecision(ahead, "bridge-b", at(14), seenAhead), "wait");
    assert.equal(leaseDecision(ahead, "bridge-b", at(16), seenAhead), "takeover", "not an hour later");

    // A process that just started has seen nothing change yet: it waits a full duration,
    // whatever the record says (client-go does the same).
    const fresh = observeLease(undefined, { ...held, renewTime: microTime(at(-600)) }, at(100).getTime());
    assert.equal(leaseDecision(held, "bridge-b", at(110), fresh), "wait");
    assert.equal(leaseDecision(held, "bridge-b", at(115.1), fresh), "takeover");
  });

  it("writes MicroTime stamps, keeps acquireTime on renewal and counts transitions on takeover", () => {
    assert.equal(microTime(T0), "2026-11-22T10:00:00.000000Z");
    assert.deepEqual(nextLeaseSpec(held, "bridge-a", at(2), "renew"), {
      ...held,
      renewTime: "2026-11-22T10:00:02.000000Z",
    });
    assert.deepEqual(nextLeaseSpec(held, "bridge-b", at(20), "takeover"), {
      holderIdentity: "bridge-b",
      leaseDurationSeconds: 15,
      acquireTime: "2026-11-22T10:00:20.000000Z",
      renewTime: "2026-11-22T10:00:20.000000Z",
      leaseTransitions: 3,
    });
    assert.equal(nextLeaseSpec(undefined, "bridge-a", T0, "create").leaseTransitions, 0);
  });

  it("refuses timings where an old leader could still work after a new one starts", () => {
    assert.equal(timingProblem(DEFAULT_TIMING), undefined);
    assert.match(
      timingProblem({ leaseDurationSeconds: 10, renewDeadlineSeconds: 10, retryPeriodSeconds: 2 }) ?? "",
      /lease duration must be longer than the renew deadline/,
    );
    assert.match(
      timingProblem({ leaseDurationSeconds: 15, renewDeadlineSeconds: 2, retryPeriodSeconds: 2 }) ?? "",
      /renew deadline must be longer than the retry period/,
    );
    assert.match(
      timingProblem({ leaseDurationSeconds: 15, renewDeadlineSeconds: 10, retryPeriodSeconds: 0 }) ?? "",
      /retry period must be positive/,
    );
  });
});
