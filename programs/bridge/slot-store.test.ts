import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { SlotStore, type SlotStoreOptions } from "./slot-store";

describe("SlotStore: the local target's port slots, kept in a file", () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-slot-store-"));
    file = path.join(dir, "slots.json");
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  const store = (extra: Partial<SlotStoreOptions> = {}) =>
    new SlotStore({ file, portRange: { from: 42000, to: 42099 }, slotSize: 10, ...extra });

  it("holds no group without a slots file, or with one that does not parse", () => {
    assert.deepEqual(store().groups(), []);
    fs.writeFileSync(file, "{not json");
    assert.deepEqual(store().groups(), []);
  });

  it("places a group's ports, and a second store on the same file (a restarted bridge) finds them", () => {
    const first = store().place("team-a/proxy", 12);
    assert.equal(first.range.to - first.range.from + 1, 20, "two slots of ten for twelve ports");
    assert.deepEqual(first.reserved, []);
    const again = store();
    assert.deepEqual(again.groups(), ["team-a/proxy"]);
    assert.deepEqual(again.place("team-a/proxy", 12), first, "a group's ports never move");
    assert.ok(!fs.existsSync(`${file}.tmp`), "written beside and renamed");
  });

  it("gives two groups disjoint ports, and a released group's slots to the next one", () => {
    const slots = store();
    const a = slots.place("a/p", 5);
    const b = slots.place("b/p", 5);
    assert.ok(a.range.to < b.range.from || b.range.to < a.range.from, "no port of one is the other's");
    slots.release("a/p");
    assert.deepEqual(store().groups(), ["b/p"]);
    slots.release("a/p");
    assert.deepEqual(store().groups(), ["b/p"], "releasing a group holding nothing changes nothing");
  });

  it("grows a group up to --max-ports-per-group, and no further", () => {
    const ports = store({ maxPortsPerGroup: 30 }).place("a/p", 95);
    assert.equal(ports.range.to - ports.range.from + 1, 30);
  });

  it("refuses a new group when every slot of the range is held", () => {
    const slots = store({ portRange: { from: 42000, to: 42019 } });
    slots.place("a/p", 5);
    slots.place("b/p", 5);
    assert.throws(() => slots.place("c/p", 5), /no free port slot for c\/p/);
    assert.deepEqual(
      store({ portRange: { from: 42000, to: 42019 } })
        .groups()
        .sort(),
      ["a/p", "b/p"],
    );
  });
});
