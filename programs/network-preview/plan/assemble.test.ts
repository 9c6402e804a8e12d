import { strict as assert } from "node:assert";
import type { NetworkPathObject } from "../../../lib/bridge/model";
import { networkPath } from "../../../test/helpers/network-path";
import type { BridgeTarget as Target } from "../../../network/contract/bridge-target";
import type { ResourceStep } from "./steps";
import { assemble } from "./assemble";
import { planGroups } from "./groups";
import type { ClaimChange, GroupPlan } from "./model";

const range = { from: 20000, to: 20009 };
const local: Target = { kind: "local", stateDir: "/nonexistent", bindAddress: "127.0.0.1", portRange: range };

/** A path of team-a's proxy group; with `port`, realised and reporting 127.0.0.1:port. */
const path = (name: string, port?: number, implementation = "proxy"): NetworkPathObject =>
  networkPath(name, {
    spec: { implementation, instanceHost: `${name}.db.internal` },
    status: port === undefined ? undefined : { observedGeneration: 1, hostForConsumer: "127.0.0.1", port },
  });

const claim = (name: string): ClaimChange => ({
  action: "apply",
  namespace: "team-a",
  name,
  implementation: "proxy",
  instanceHost: `${name}.db.internal`,
  port: 5432,
});

/** The group the bridge would run for these realised paths and new claims. */
function planned(paths: NetworkPathObject[], claims: ClaimChange[], implementation = "proxy"): GroupPlan {
  const view = {
    paths,
    claimXr: new Map(paths.map((p) => [`team-a/${p.metadata.name}`, p.spec.connection])),
  };
  const g = planGroups(view, claims, true, true).find((x) => x.key === `team-a/${implementation}`);
  assert.ok(g);
  return g;
}

function step(name: string, op: ResourceStep["op"], io: Partial<ResourceStep> = {}): ResourceStep {
  return {
    urn: `urn:pulumi:np-team-a-proxy::klutch-network-paths::pulumi-nodejs:dynamic:Resource::${name}`,
    type: "pulumi-nodejs:dynamic:Resource",
    op,
    name,
    diffPaths: [],
    replaceReasons: [],
    deleteBeforeReplace: false,
    ...io,
  };
}

/** The local program's PortAllocation step for these listener ids, after a run that gave `previous`. */
const ports = (ids: string[], previous: Record<string, number>, r = range) =>
  step("ports", "update", {
    newInputs: { range: r, ids, reserved: [], overflow: "leave-out" },
    oldOutputs: { range, assignments: previous },
  });

describe("network preview plan: a previewed group's connections and ports", () => {
  it("a realised path keeps its port; a new claim gets a free one, named by its claim, and the local proxy's own ports are counted", () => {
    const g = planned([path("billing", 20001)], [claim("orders")]);
    const { connections, ports: group } = assemble(
      g,
      [ports(["billing", "orders-pending"], { billing: 20001 })],
      local,
      "proxy",
    );
    assert.deepEqual(
      connections.map((c) => [c.id, c.change, c.before, c.after]),
      [
        ["billing", "keep", { host: "127.0.0.1", port: 20001 }, { host: "127.0.0.1", port: 20001 }],
        ["pending:team-a/orders", "add", undefined, { host: "127.0.0.1", port: 20000 }],
      ],
    );
    assert.deepEqual(group, {
      group: "team-a/proxy",
      rangeBefore: range,
      rangeAfter: range,
      before: { billing: 20001 },
      after: { billing: 20001, "pending:team-a/orders": 20000 },
      ownPorts: 2,
    });
  });

  it("new claims whose names prefix one another: only the set of their ports is known", () => {
    const g = planned([], [claim("db"), claim("db-replica"), claim("cache")]);
    const { connections } = assemble(
      g,
      [ports(["cache-pending", "db-pending", "db-replica-pending"], {})],
      local,
      "proxy",
    );
    const after = Object.fromEntries(connections.map((c) => [c.id, c.after]));
    assert.equal(typeof after["pending:team-a/cache"]?.port, "number");
    const db = after["pending:team-a/db"];
    assert.equal(db?.port, "unknown");
    assert.equal(db?.candidates?.length, 2);
    assert.deepEqual(
      db?.candidates,
      [...(db?.candidates ?? [])].sort((a, b) => a - b),
    );
    assert.deepEqual(after["pending:team-a/db-replica"], db);
  });

  it("a connection left without a port is broken, and listed unplaced under its claim's name", () => {
    const g = planned([path("billing", 20000)], [claim("orders")]);
    const full = { from: 20000, to: 20000 };
    const { connections, ports: group } = assemble(
      g,
      [ports(["billing", "orders-pending"], { billing: 20000 }, full)],
      { ...local, portRange: full },
      "proxy",
    );
    const orders = connections.find((c) => c.id === "pending:team-a/orders");
    assert.deepEqual(orders?.broken, ["no port left in 20000-20000: the proxy leaves it out"]);
    assert.equal(orders?.after, undefined);
    assert.deepEqual(group?.unplaced, ["pending:team-a/orders"]);
  });

  it("without the PortAllocation's step the ports are unknown, not guessed", () => {
    const g = planned([], [claim("orders")]);
    const { connections, ports: group } = assemble(g, [], local, "proxy");
    assert.deepEqual(connections[0]?.after, { host: "127.0.0.1", port: "unknown" });
    assert.equal(group?.after, "unknown");
  });

  it("a deleted path is a delete with the endpoint it reported; a path never realised is new to its consumers", () => {
    const deleting = {
      ...path("ledger", 20002),
      metadata: { name: "ledger", generation: 1, deletionTimestamp: "x" },
    };
    const g = planned([path("billing"), deleting], []);
    const { connections } = assemble(g, [ports(["billing"], {})], local, "proxy");
    assert.deepEqual(
      connections.map((c) => [c.id, c.change, c.before]),
      [
        ["billing", "add", undefined],
        ["ledger", "delete", { host: "127.0.0.1", port: 20002 }],
      ],
    );
  });

  it("each connection's hops: the group's resources and its own probe, the ports hop naming a moved range", () => {
    const g = planned([path("billing", 20001), path("orders", 20003)], []);
    const moved = { from: 21000, to: 21009 };
    const steps = [
      ports(["billing", "orders"], { billing: 20001, orders: 20003 }, moved),
      step("probe-billing", "same"),
      step("probe-orders", "create"),
    ];
    const { connections } = assemble(g, steps, { ...local, portRange: moved }, "proxy");
    const orders = connections.find((c) => c.id === "orders");
    assert.deepEqual(
      orders?.hops.map((h) => [h.kind, h.urn.slice(h.urn.lastIndexOf("::") + 2), h.detail]),
      [
        ["proxy-port", "ports", "range 20000-20009 → 21000-21009"],
        ["probe", "probe-orders", undefined],
      ],
    );
  });

  it("a routed implementation: consumers dial the instance itself, and there is no port group", () => {
    const g = planned([path("orders", 5432, "openstack")], [], "openstack");
    const { connections, ports: group } = assemble(g, [], local, "openstack");
    assert.deepEqual(connections[0]?.after, { host: "orders.db.internal", port: 5432 });
    assert.equal(group, undefined);
  });
});
