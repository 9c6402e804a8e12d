import { strict as assert } from "node:assert";
import type { NetworkPathObject } from "../../../lib/bridge/model";
import { networkPath } from "../../../test/helpers/network-path";
import type { BridgeSettings } from "../../../lib/bridge/settings";
import type { BridgeTarget as Target } from "../../../network/contract/bridge-target";
import { clusterTarget } from "../../../test/helpers/wireguard-fixtures";
import { groupTarget, localGroupRange } from "./group-target";
import type { BridgeLayout, GroupPlan } from "./model";

const range = { from: 20000, to: 20099 };
const local: BridgeLayout = {
  target: { kind: "local", stateDir: "/nonexistent", bindAddress: "127.0.0.1", portRange: range },
  portRange: range,
  slotSize: 10,
  bindAddress: "127.0.0.1",
};
const path = (name: string): NetworkPathObject => networkPath(name);
const paths = (n: number) => Array.from({ length: n }, (_, i) => path(`db-${i}`));
const group = (after: NetworkPathObject[]): GroupPlan => ({
  key: "team-a/proxy",
  before: [],
  after,
  added: [],
  deletedIds: new Set(),
});

describe("network preview plan: a local group's ports, placed as the bridge places them", () => {
  it("a group the slots file does not hold yet gets one slot of the range, as a prediction", () => {
    const r = localGroupRange(local, {}, "team-a/proxy", paths(1));
    assert.equal(r.predictedSlot, true);
    assert.equal(r.range.to - r.range.from + 1, local.slotSize);
    assert.ok(r.range.from >= range.from && r.range.to <= range.to);
  });

  it("a group whose slot still holds its listeners keeps exactly that slot, no prediction and no note", () => {
    const slots = { "team-a/proxy": [{ slot: 1, count: 1 }] };
    assert.deepEqual(localGroupRange(local, slots, "team-a/proxy", paths(8)), {
      range: { from: 20010, to: 20019 },
      reserved: [],
      predictedSlot: false,
    });
    const notes: string[] = [];
    const target = groupTarget(local, slots, group(paths(8)), notes);
    assert.deepEqual(target.portRange, { from: 20010, to: 20019 });
    assert.deepEqual(notes, []);
  });

  it("a group that outgrows its slot is predicted to grow past other groups' slots, which stay reserved, and says so", () => {
    const slots = { "team-a/proxy": [{ slot: 1, count: 1 }], "team-b/proxy": [{ slot: 2, count: 1 }] };
    const notes: string[] = [];
    const target = groupTarget(local, slots, group(paths(9)), notes);
    assert.equal(target.kind, "local");
    assert.equal(target.portRange.from, 20010);
    if (target.kind === "local")
      assert.deepEqual(
        target.reservedPorts,
        Array.from({ length: 10 }, (_, i) => 20020 + i),
      );
    assert.match(
      notes.join("\n"),
      /^group team-a\/proxy: its ports 20010-\d+ \(less 10 of other groups between its slots\) are where the bridge would place them now \(new or grown\)$/,
    );
  });
});

describe("network preview plan: a kubernetes group's target", () => {
  const cluster = clusterTarget() as Extract<Target, { kind: "kubernetes" }>;
  const layout = (settings?: BridgeLayout["settings"]): BridgeLayout => ({
    target: cluster,
    portRange: cluster.portRange,
    slotSize: 10,
    bindAddress: "127.0.0.1",
    ...(settings ? { settings } : {}),
  });
  const teamA: BridgeSettings = {
    version: 1,
    consumers: {
      "team-a": {
        appCluster: "a",
        implementation: "proxy",
        proxy: { serviceType: "LoadBalancer", portRange: { from: 31000, to: 31009 } },
      },
    },
  };

  it("the namespace's proxy settings overlay the bridge's flags, named planned or current", () => {
    for (const from of ["planned", "live"] as const) {
      const notes: string[] = [];
      const target = groupTarget(layout({ value: teamA, from }), {}, group([path("orders")]), notes);
      assert.equal(target.kind === "kubernetes" ? target.serviceType : undefined, "LoadBalancer");
      assert.deepEqual(target.portRange, { from: 31000, to: 31009 });
      assert.match(
        notes.join("\n"),
        new RegExp(`with its ${from === "planned" ? "planned" : "current"} proxy settings$`),
      );
    }
  });

  it("without settings for the namespace, the bridge's flags as they are", () => {
    const notes: string[] = [];
    const target = groupTarget(layout(), {}, group([path("orders")]), notes);
    assert.deepEqual(target, cluster);
    assert.match(notes.join("\n"), /with the bridge's flags \(no proxy settings for its namespace\)$/);
  });

  it("a kernel hop's instance Services stand in with a TEST-NET address, and the notes say so; an address needs none", () => {
    const kernel: BridgeSettings = {
      version: 1,
      consumers: {
        "team-a": {
          appCluster: "a",
          implementation: "proxy",
          proxy: { serviceType: "ClusterIP", portRange: { from: 31000, to: 31009 }, hop: "kernel" },
        },
      },
    };
    const notes: string[] = [];
    const paths = [
      networkPath("orders", { spec: { instanceHost: "pg.team-a.svc.cluster.local", port: 5432 } }),
      networkPath("vm", { spec: { instanceHost: "10.0.0.5", port: 5432 } }),
    ];
    const target = groupTarget(layout({ value: kernel, from: "live" }), {}, group(paths), notes);
    assert.ok(target.kind === "kubernetes" && target.hop === "kernel");
    assert.deepEqual(target.backends, {
      "pg.team-a.svc.cluster.local:5432": { backends: [{ address: "192.0.2.1", port: 5432 }] },
    });
    assert.match(
      notes.join("\n"),
      /a kernel path; its EndpointSlices show 192\.0\.2\.1 for each instance Service/,
    );
  });
});
