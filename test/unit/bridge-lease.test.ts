import { strict as assert } from "node:assert";
import {
  DEFAULT_TIMING,
  leaseDecision,
  microTime,
  nextLeaseSpec,
  timingProblem,
  type LeaseSpec,
} from "../../lib/bridge/lease";

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

  it("creates a missing lease, renews its own, waits on a live rival's and takes over an expired or empty one", () => {
    assert.equal(leaseDecision(undefined, "bridge-b", T0), "create");
    assert.equal(leaseDecision(held, "bridge-a", at(100)), "renew", "its own, even when late");
    assert.equal(leaseDecision(held, "bridge-b", at(14.9)), "wait");
    assert.equal(leaseDecision(held, "bridge-b", at(15)), "wait", "expiry is strictly after the duration");
    assert.equal(leaseDecision(held, "bridge-b", at(15.1)), "takeover");
    assert.equal(leaseDecision({ ...held, holderIdentity: "" }, "bridge-b", at(1)), "takeover", "released");
    assert.equal(leaseDecision({ holderIdentity: "bridge-a" }, "bridge-b", T0), "takeover", "never renewed");
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
