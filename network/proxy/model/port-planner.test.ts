import { strict as assert } from "node:assert";
import {
  DEFAULT_HISTORY_LIMIT,
  PortPlan,
  PortPlanInput,
  idsProblem,
  planPorts,
  portRangeProblem,
} from "./port-planner";

/** mulberry32: a small seeded PRNG, so every failure replays. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const RANGE = { from: 30000, to: 30009 };

/** Runs the planner the way the dynamic provider does: the last plan feeds the next. */
function next(prev: PortPlan | undefined, ids: string[], extra: Partial<PortPlanInput> = {}): PortPlan {
  return planPorts({
    range: RANGE,
    ids,
    previous: prev?.assignments,
    released: prev?.released,
    ...extra,
  });
}

describe("proxy port planner (pure)", () => {
  it("hands out the lowest ports first, in sorted id order, whatever the input order", () => {
    const a = next(undefined, ["ns/c", "ns/a", "ns/b"]);
    const b = next(undefined, ["ns/b", "ns/c", "ns/a"]);
    assert.deepEqual(a, b);
    assert.deepEqual(a.assignments, { "ns/a": 30000, "ns/b": 30001, "ns/c": 30002 });
    assert.deepEqual(Object.keys(a.assignments), ["ns/a", "ns/b", "ns/c"]);
    assert.deepEqual(a.allocated, ["ns/a", "ns/b", "ns/c"]);
  });

  it("keeps every connection's port across runs and restarts, adding new ids around them", () => {
    const first = next(undefined, ["ns/m", "ns/z"]);
    // A "restart": the same state read back from JSON (as Pulumi stores it).
    const restored = JSON.parse(JSON.stringify(first)) as PortPlan;
    const second = next(restored, ["ns/a", "ns/m", "ns/z"]);
    assert.equal(second.assignments["ns/m"], first.assignments["ns/m"]);
    assert.equal(second.assignments["ns/z"], first.assignments["ns/z"]);
    assert.equal(second.assignments["ns/a"], 30002, "the new id takes the next never-used port");
    assert.deepEqual(second.allocated, ["ns/a"]);
    // Unchanged input: the same assignments and history, nothing allocated.
    const third = next(second, ["ns/z", "ns/a", "ns/m"]);
    assert.deepEqual(third.assignments, second.assignments);
    assert.deepEqual(third.released, second.released);
    assert.deepEqual(third.allocated, []);
  });

  it("reuses a port only after its connection is deleted, and never-used ports before released ones", () => {
    let plan = next(undefined, ["ns/a", "ns/b", "ns/c"]);
    plan = next(plan, ["ns/a", "ns/c"]); // delete b (30001)
    assert.deepEqual(plan.releasedNow, [30001]);
    assert.deepEqual(plan.released, [{ port: 30001, id: "ns/b" }]);
    plan = next(plan, ["ns/a", "ns/c", "ns/d"]);
    assert.equal(plan.assignments["ns/d"], 30003, "not the just-released 30001");
    // Fill the range: released ports come back least recently released first.
    plan = next(plan, ["ns/a", "ns/d"]); // release c (30002) after b (30001)
    const all = ["ns/a", "ns/d", ...Array.from({ length: 6 }, (_, i) => `ns/n${i}`)];
    plan = next(plan, all);
    assert.deepEqual(
      all.slice(2).map((id) => plan.assignments[id]),
      [30004, 30005, 30006, 30007, 30008, 30009],
    );
    plan = next(plan, [...all, "ns/x"]);
    assert.equal(plan.assignments["ns/x"], 30001, "b's port was released first, so it comes back first");
    plan = next(plan, [...all, "ns/x", "ns/y"]);
    assert.equal(plan.assignments["ns/y"], 30002);
    assert.deepEqual(plan.released, []);
  });

  it("moves connections whose port left the range or became reserved, and reports them", () => {
    const plan = next(undefined, ["ns/a", "ns/b", "ns/c"]);
    const moved = planPorts({
      range: { from: 30001, to: 30009 },
      ids: ["ns/a", "ns/b", "ns/c"],
      previous: plan.assignments,
      reserved: [30002],
    });
    assert.deepEqual(moved.moved, ["ns/a", "ns/c"]);
    assert.equal(moved.assignments["ns/b"], 30001);
    assert.ok(![30000, 30002].includes(moved.assignments["ns/a"] as number));
    assert.ok(![30000, 30002].includes(moved.assignments["ns/c"] as number));
  });

  it("repairs corrupt state where two ids share a port (the first id in sorted order keeps it)", () => {
    const plan = planPorts({
      range: RANGE,
      ids: ["ns/a", "ns/b"],
      previous: { "ns/b": 30005, "ns/a": 30005 },
    });
    assert.equal(plan.assignments["ns/a"], 30005);
    assert.notEqual(plan.assignments["ns/b"], 30005);
    assert.deepEqual(plan.moved, ["ns/b"]);
  });

  it("never hands out reserved ports", () => {
    const plan = planPorts({
      range: { from: 8400, to: 8406 },
      ids: ["a", "b", "c", "d", "e"],
      reserved: [8404, 8405],
    });
    assert.deepEqual(Object.values(plan.assignments).sort(), [8400, 8401, 8402, 8403, 8406]);
  });

  it("fails clearly when the range runs out, naming the range and how many ports are needed", () => {
    const ids = Array.from({ length: 12 }, (_, i) => `ns/c${i}`);
    assert.throws(
      () => next(undefined, ids),
      (err: Error) => {
        assert.equal(
          err.message,
          "port range 30000-30009 has 10 usable ports but 12 connections need one: widen portRange (e.g. to: 30011) or remove 2 connections",
        );
        return true;
      },
    );
    assert.throws(
      () => planPorts({ range: RANGE, ids: ids.slice(0, 10), reserved: [30003] }),
      /port range 30000-30009 has 9 usable ports \(1 of them reserved\) but 10 connections need one/,
    );
  });

  it("rejects bad input with errors that name the field", () => {
    assert.match(
      portRangeProblem({ from: 0, to: 5 }) ?? "",
      /^portRange\.from must be a whole number from 1 to 65535/,
    );
    assert.match(portRangeProblem({ from: 5, to: 70000 }) ?? "", /^portRange\.to must be/);
    assert.match(
      portRangeProblem({ from: 9, to: 5 }) ?? "",
      /portRange\.from \(9\) must not be greater than portRange\.to \(5\)/,
    );
    assert.match(portRangeProblem(undefined) ?? "", /portRange must be an object/);
    assert.equal(portRangeProblem({ from: 1, to: 1 }), undefined);
    assert.match(idsProblem(["a", ""]) ?? "", /ids\[1\] must be a non-empty connection id/);
    assert.match(idsProblem(["a", "b", "a"]) ?? "", /ids\[2\] duplicates connection id "a"/);
    assert.throws(() => planPorts({ range: RANGE, ids: ["x", "x"] }), /duplicates connection id "x"/);
    assert.throws(() => planPorts({ range: { from: 2, to: 1 }, ids: [] }), /portRange\.from/);
  });

  it("keeps the release history bounded, dropping the oldest", () => {
    const range = { from: 1000, to: 1199 };
    const ids = Array.from({ length: 150 }, (_, i) => `c${String(i).padStart(3, "0")}`);
    const full = planPorts({ range, ids });
    const emptied = planPorts({ range, ids: [], previous: full.assignments, released: full.released });
    assert.equal(emptied.releasedNow.length, 150);
    assert.equal(emptied.released.length, DEFAULT_HISTORY_LIMIT);
    assert.equal(emptied.released[0]?.port, 1150 - DEFAULT_HISTORY_LIMIT, "newest releases kept");
  });

  it("stays collision-free and least-recently-released over 10,000 random create/delete steps", () => {
    // A 50-port range with the default history (64) remembers every release, so an exact
    // model can say which port each new connection must get.
    const range = { from: 40000, to: 40049 };
    const size = range.to - range.from + 1;
    let steps = 0;
    let exhaustions = 0;
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]) {
      const rand = prng(seed);
      let plan: PortPlan | undefined;
      const everUsed = new Set<number>();
      const releaseOrder: number[] = []; // model: oldest first
      let live = new Map<string, number>();
      let serial = 0;
      for (let i = 0; i < 1000; i++, steps++) {
        const ids = new Set(live.keys());
        // Phases of growth (into exhaustion) and of shrinking; sometimes several ops at once.
        const deleteBias = Math.floor(i / 100) % 2 === 0 ? 0.3 : 0.7;
        const ops = 1 + Math.floor(rand() * 3);
        for (let k = 0; k < ops; k++) {
          if (ids.size > 0 && rand() < deleteBias) {
            const victims = [...ids];
            ids.delete(victims[Math.floor(rand() * victims.length)] as string);
          } else {
            ids.add(`ns${seed}/conn-${serial++}`);
          }
        }
        let nextPlan: PortPlan;
        try {
          nextPlan = planPorts({
            range,
            ids: [...ids],
            previous: plan?.assignments,
            released: plan?.released,
          });
        } catch (err) {
          assert.ok(ids.size > size, `only a full range may fail: ${(err as Error).message}`);
          assert.match(
            (err as Error).message,
            /^port range 40000-40049 has 50 usable ports but \d+ connections need one/,
          );
          exhaustions++;
          continue;
        }
        const ports = Object.values(nextPlan.assignments);
        assert.equal(new Set(ports).size, ports.length, `step ${i}: two connections share a port`);
        assert.ok(ports.every((p) => p >= range.from && p <= range.to));
        // Survivors keep their ports.
        for (const [id, port] of live)
          if (ids.has(id)) assert.equal(nextPlan.assignments[id], port, `${id} moved`);
        // Model the releases (ascending within one step), then check each new id's port.
        const gone = [...live]
          .filter(([id]) => !ids.has(id))
          .map(([, p]) => p)
          .sort((a, b) => a - b);
        for (const p of gone) {
          releaseOrder.splice(releaseOrder.indexOf(p), releaseOrder.includes(p) ? 1 : 0);
          releaseOrder.push(p);
        }
        const fresh = [...ids].filter((id) => !live.has(id)).sort();
        for (const id of fresh) {
          const port = nextPlan.assignments[id] as number;
          // Never-used ports go out in ascending order, so the used ones are always a prefix.
          const expected = everUsed.size < size ? range.from + everUsed.size : releaseOrder[0];
          assert.equal(port, expected, `step ${i}: ${id} should get ${expected}`);
          everUsed.add(port);
          if (releaseOrder[0] === port) releaseOrder.shift();
        }
        live = new Map(Object.entries(nextPlan.assignments));
        plan = JSON.parse(JSON.stringify(nextPlan)) as PortPlan;
      }
    }
    assert.equal(steps, 10000);
    assert.ok(exhaustions > 0, "the random walk reached a full range at least once");
  });
});
