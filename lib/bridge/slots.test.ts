import { strict as assert } from "node:assert";
import { groupPorts, heldSlots, parseSlots, placeGroup, type Slots } from "./slots";

const o = { slotSize: 50, maxSlots: 20, maxSlotsPerGroup: 20 };

describe("local port slots (lib/bridge/slots.ts)", () => {
  it("places the first group at 0 and the next in the middle of the largest free run", () => {
    assert.deepEqual(placeGroup({}, "a", 3, o), [{ slot: 0, count: 1 }]);
    assert.deepEqual(placeGroup({ a: [{ slot: 0, count: 1 }] }, "b", 3, o), [{ slot: 10, count: 1 }]);
  });

  it("grows in place first, so the ports stay one range", () => {
    // 100 connections + 2 own listeners need 3 slots of 50.
    const slots: Slots = { a: [{ slot: 0, count: 1 }], b: [{ slot: 10, count: 1 }] };
    assert.deepEqual(placeGroup(slots, "a", 102, o), [{ slot: 0, count: 3 }]);
  });

  it("blocked by a neighbour, grows into free slots elsewhere, keeping every slot it held", () => {
    const slots: Slots = { a: [{ slot: 0, count: 1 }], b: [{ slot: 2, count: 1 }] };
    // 150 ports: slot 1 in place, then slot 3 after b.
    assert.deepEqual(placeGroup(slots, "a", 150, o), [
      { slot: 0, count: 2 },
      { slot: 3, count: 1 },
    ]);
    // Free slots after its last one come first, then the ones before it (wrapping round).
    const late: Slots = { a: [{ slot: 18, count: 1 }], b: [{ slot: 19, count: 1 }] };
    assert.deepEqual(placeGroup(late, "a", 150, o), [
      { slot: 0, count: 2 },
      { slot: 18, count: 1 },
    ]);
  });

  it("gives a late 500-claim group after 13 others the slots it needs, not only the largest run", () => {
    const big = { slotSize: 50, maxSlots: 104, maxSlotsPerGroup: 104 };
    let slots: Slots = {};
    for (let g = 0; g < 13; g++) slots = { ...slots, [`g${g}`]: placeGroup(slots, `g${g}`, 102, big) };
    const runs = placeGroup(slots, "late", 502, big);
    assert.equal(heldSlots(runs), 11, "502 ports need 11 slots of 50");
    assert.ok(runs.length > 1, "in more than one block");
    const taken = new Set(Object.values(slots).flatMap((bs) => bs.map((b) => b.slot)));
    assert.ok(
      runs.every((b) => [...Array(b.count).keys()].every((i) => !taken.has(b.slot + i))),
      "only free slots",
    );
    // What the old rule gave it: the largest free run only.
    assert.ok(Math.max(...runs.map((b) => b.count)) < 11);
  });

  it("never shrinks or moves a group; a cap holds; a new group with no free slot is refused", () => {
    assert.deepEqual(placeGroup({ a: [{ slot: 4, count: 3 }] }, "a", 1, o), [{ slot: 4, count: 3 }]);
    assert.deepEqual(placeGroup({}, "a", 500, { ...o, maxSlotsPerGroup: 2 }), [{ slot: 0, count: 2 }]);
    assert.deepEqual(
      placeGroup({ a: [{ slot: 0, count: 1 }], b: [{ slot: 1, count: 1 }] }, "a", 500, { ...o, maxSlots: 2 }),
      [{ slot: 0, count: 1 }],
      "a full range: the group keeps what it has",
    );
    assert.throws(
      () => placeGroup({ a: [{ slot: 0, count: 2 }] }, "c", 1, { ...o, maxSlots: 2 }),
      /no free port slot for c/,
    );
  });

  it("gives a group the hull of its blocks with the other groups' ports between them reserved", () => {
    assert.deepEqual(groupPorts({ from: 42000, to: 42999 }, [{ slot: 2, count: 2 }], 50), {
      range: { from: 42100, to: 42199 },
      reserved: [],
    });
    const split = groupPorts(
      { from: 42000, to: 42999 },
      [
        { slot: 0, count: 1 },
        { slot: 2, count: 1 },
      ],
      5,
    );
    assert.deepEqual(split, {
      range: { from: 42000, to: 42014 },
      reserved: [42005, 42006, 42007, 42008, 42009],
    });
    assert.throws(
      () => groupPorts({ from: 42000, to: 42099 }, [{ slot: 1, count: 2 }], 50),
      /outside the port range/,
    );
  });

  it("reads the slots files of older bridges: a slot number, or one block, per group", () => {
    assert.deepEqual(
      parseSlots('{"a":0,"b":{"slot":3,"count":2},"c":[{"slot":7,"count":1},{"slot":5,"count":2}]}'),
      {
        a: [{ slot: 0, count: 1 }],
        b: [{ slot: 3, count: 2 }],
        c: [{ slot: 5, count: 3 }],
      },
    );
    assert.deepEqual(parseSlots("{"), {});
  });
});
