import { strict as assert } from "node:assert";
import { DEFAULT_NBTHREAD, haproxyOptionsFor, profileProblem, proxyResources } from "./profile";

describe("proxy CPU profile (pure)", () => {
  it("shares CPUs by default: two threads, sleeping poller, small request, no CPU limit", () => {
    assert.equal(DEFAULT_NBTHREAD, 2);
    assert.deepEqual(haproxyOptionsFor(), { nbthread: 2 });
    assert.deepEqual(proxyResources(), {
      requests: { cpu: "100m", memory: "64Mi" },
      limits: { memory: "256Mi" },
    });
  });

  it("dedicated CPUs: one thread per CPU, busy polling, requests equal to limits in whole CPUs", () => {
    assert.deepEqual(haproxyOptionsFor(3), { nbthread: 3, busyPolling: true });
    assert.deepEqual(proxyResources(3), {
      requests: { cpu: "3", memory: "256Mi" },
      limits: { cpu: "3", memory: "256Mi" },
    });
  });

  it("overrides come last (e.g. dedicated CPUs without polling)", () => {
    assert.deepEqual(haproxyOptionsFor(1, { busyPolling: false, maxconn: 100 }), {
      nbthread: 1,
      busyPolling: false,
      maxconn: 100,
    });
    assert.deepEqual(haproxyOptionsFor(undefined, { nbthread: 4 }), { nbthread: 4 });
  });

  it("names contradictions and out-of-range CPU counts", () => {
    assert.equal(profileProblem(undefined), undefined);
    assert.equal(profileProblem(2, { nbthread: 2 }), undefined);
    assert.equal(profileProblem(1, { busyPolling: false }), undefined);
    for (const bad of [0, 65, 1.5, "2", {}]) {
      assert.match(profileProblem(bad) ?? "", /^dedicatedCpus must be a whole number of CPUs from 1 to 64/);
    }
    assert.match(
      profileProblem(2, { nbthread: 4 }) ?? "",
      /^haproxy\.nbthread 4 differs from dedicatedCpus 2/,
    );
    assert.match(profileProblem(undefined, { busyPolling: true }) ?? "", /set dedicatedCpus instead$/);
  });
});
