import { strict as assert } from "node:assert";
import type { EndpointSliceLike, InstanceServiceLike } from "./model/kernel-path";
import { networkPath } from "../../test/helpers/network-path";
import {
  InstanceBackendsTracker,
  resolveBackends,
  type BackendsTarget,
  type InstanceReads,
} from "./instance-backends";

const PG = "pg.team-a.svc.cluster.local";
const path = (name: string, instanceHost: string, port = 5432) =>
  networkPath(name, { spec: { implementation: "proxy", instanceHost, port } });
const service: InstanceServiceLike = { spec: { ports: [{ name: "pg", port: 5432 }] } };
const slice = (...addresses: string[]): EndpointSliceLike => ({
  addressType: "IPv4",
  endpoints: addresses.map((a) => ({ addresses: [a], conditions: { ready: true } })),
  ports: [{ name: "pg", port: 5432 }],
});

/** Reads from a map the test changes, counting calls; `fail` makes every read reject. */
function fakeReads(state: { pods: string[]; fail?: boolean; calls: number }): InstanceReads {
  const gate = <T>(value: T) => {
    state.calls++;
    return state.fail ? Promise.reject(new Error("services is forbidden")) : Promise.resolve(value);
  };
  return {
    service: (ns, name) => gate(ns === "team-a" && name === "pg" ? service : undefined),
    slices: (ns, name) => gate(ns === "team-a" && name === "pg" ? [slice(...state.pods)] : []),
  };
}

describe("bridge: a kernel path's instance endpoints", () => {
  it("reads each instance Service once per resolution, not for addresses or names the hop cannot follow", async () => {
    const state = { pods: ["10.244.0.7"], calls: 0 };
    const { backends, failed } = await resolveBackends(
      [
        path("a", PG),
        path("b", PG),
        path("c", "10.0.0.1"),
        path("d", "db.example.com"),
        path("e", "gone.team-a.svc"),
      ],
      fakeReads(state),
    );
    assert.deepEqual(backends, {
      [`${PG}:5432`]: { backends: [{ address: "10.244.0.7", port: 5432 }] },
      "gone.team-a.svc:5432": { problem: "Service team-a/gone does not exist in the data-service cluster" },
    });
    assert.equal(failed.size, 0);
    assert.equal(state.calls, 4, "the Service and its slices, for pg and for gone");
  });

  it("a read that fails is that instance's problem, and marked failed", async () => {
    const state = { pods: [], fail: true, calls: 0 };
    const { backends, failed } = await resolveBackends([path("a", PG)], fakeReads(state));
    assert.match(
      (backends[`${PG}:5432`] as { problem: string }).problem,
      /cannot read Service team-a\/pg .*forbidden/,
    );
    assert.deepEqual([...failed], [`${PG}:5432`]);
  });

  it("the tracker adds endpoints to kernel-hop targets only, follows them, and keeps the last ones while reads fail", async () => {
    const state = { pods: ["10.244.0.7"], fail: false, calls: 0 };
    const hops: Record<string, "haproxy" | "kernel"> = {
      "team-a/proxy": "kernel",
      "team-b/proxy": "haproxy",
    };
    const tracker = new InstanceBackendsTracker({
      targetOf: (key) => ({ hop: hops[key] }),
      reads: fakeReads(state),
    });
    const live = [path("a", PG)];
    const kernel: BackendsTarget = { hop: "kernel" };
    assert.equal(tracker.follows("team-a/proxy"), true);
    assert.equal(tracker.follows("team-b/proxy"), false);
    const haproxy = { hop: "haproxy" as const };
    assert.equal(await tracker.realise("team-b/proxy", haproxy, live), haproxy, "an HAProxy target as it is");

    assert.equal(await tracker.moved("team-a/proxy", live), false, "never run: the cache queues it anyway");
    const first = await tracker.realise("team-a/proxy", kernel, live);
    assert.deepEqual(first.backends, {
      [`${PG}:5432`]: { backends: [{ address: "10.244.0.7", port: 5432 }] },
    });
    assert.equal(await tracker.moved("team-a/proxy", live), false);

    state.pods = ["10.244.0.12"];
    assert.equal(await tracker.moved("team-a/proxy", live), true, "the pod was replaced");
    state.fail = true;
    assert.equal(await tracker.moved("team-a/proxy", live), false, "a failing read is no move");
    const kept = await tracker.realise("team-a/proxy", kernel, live);
    assert.deepEqual(kept.backends, first.backends, "a failing read keeps what the group last ran with");

    state.fail = false;
    const second = await tracker.realise("team-a/proxy", kernel, live);
    assert.deepEqual(second.backends, {
      [`${PG}:5432`]: { backends: [{ address: "10.244.0.12", port: 5432 }] },
    });
    assert.equal(await tracker.moved("team-a/proxy", live), false);
    tracker.forget("team-a/proxy");
    state.pods = [];
    assert.equal(await tracker.moved("team-a/proxy", live), false, "a forgotten group is not followed");
  });

  it("without reads (the local target) nothing is followed", async () => {
    const tracker = new InstanceBackendsTracker({ targetOf: () => ({ hop: "kernel" }) });
    assert.equal(tracker.follows("team-a/proxy"), false);
    const target = { hop: "kernel" } as BackendsTarget;
    assert.equal(await tracker.realise("team-a/proxy", target, [path("a", PG)]), target);
  });
});
