import { strict as assert } from "node:assert";
import type { NetworkPathObject } from "../../../lib/bridge/model";
import type { BridgeTarget as Target } from "../../../network/contract/bridge-target";
import { CLUSTER_SETTINGS, clusterTarget, wireguardPath } from "../../../test/helpers/wireguard-fixtures";
import { assemble } from "./assemble";
import type { GroupPlan } from "./model";
import { toHop } from "./steps";

/**
 * The preview of a forwarded implementation's group (WireGuard): consumers dial the
 * forwarder the group's plan gives each connection (network/wireguard/model/group-plan.ts, the
 * bridge's own planning), on either target, never the instance.
 */
const settings = CLUSTER_SETTINGS;
const cluster = clusterTarget;
const path = (name: string, host: string, status?: { hostForConsumer: string; port: number }) =>
  wireguardPath(name, host, "team-w", status);

function group(before: NetworkPathObject[], after: NetworkPathObject[]): GroupPlan {
  return { key: "team-w/wireguard", before, after, added: [], deletedIds: new Set() };
}

describe("network preview: forwarded (WireGuard) groups", () => {
  it("on clusters: an added connection gets the client's headless name and the next forwarder port; the existing one keeps its own", () => {
    const old = path("orders", "10.96.12.7", { hostForConsumer: settings.clientHost, port: 5432 });
    const added = path("reports", "10.244.0.9");
    const { connections, ports } = assemble(group([old], [old, added]), [], cluster(settings), "wireguard");
    assert.deepEqual(
      connections.map((c) => [c.id, c.change, c.before, c.after]),
      [
        [
          "orders",
          "keep",
          { host: settings.clientHost, port: 5432 },
          { host: settings.clientHost, port: 5432 },
        ],
        ["reports", "add", undefined, { host: settings.clientHost, port: 20000 }],
      ],
    );
    assert.equal(ports, undefined, "no proxy port range");
  });

  /** The bridge as a process: forwarders on a client namespace's loopback. */
  const local: Target = {
    kind: "local",
    stateDir: "/tmp/x",
    bindAddress: "127.0.0.1",
    portRange: { from: 22000, to: 22099 },
  };

  it("locally: the forwarder on the client namespace's loopback", () => {
    const { connections } = assemble(group([], [path("orders", "198.51.100.10")]), [], local, "wireguard");
    assert.deepEqual(connections[0]?.after, { host: "127.0.0.1", port: 5432 });
  });

  it("what the bridge will refuse is broken, with its message: a host name on the local target, and a group without the environment's tunnel settings", () => {
    const byName = assemble(group([], [path("by-name", "db.example.test")]), [], local, "wireguard");
    assert.match(
      byName.connections[0]?.broken?.[0] ?? "",
      /the bridge refuses it: .*must be an IPv4 address/,
    );
    assert.equal(byName.connections[0]?.after, undefined);
    const unset = assemble(group([], [path("orders", "10.96.12.7")]), [], cluster(), "wireguard");
    assert.match(unset.connections[0]?.broken?.[0] ?? "", /name no WireGuard tunnel for team-w\/wireguard/);
  });

  it("on clusters a host name (a Service's, as bindings give it) is predicted at its forwarder: the bridge resolves it, the endpoint does not depend on the address", () => {
    const byName = assemble(
      group([], [path("bound", "pg.team-w.svc.cluster.local")]),
      [],
      cluster(settings),
      "wireguard",
    );
    assert.equal(byName.connections[0]?.broken, undefined);
    assert.deepEqual(byName.connections[0]?.after, { host: settings.clientHost, port: 5432 });
  });

  it("the bridge's flows patch of a cluster group is shown as its WireGuard hop", () => {
    const step = {
      urn: "urn:pulumi:team-w-wireguard::klutch-network-paths::kubernetes:core/v1:ConfigMapPatch::wireguard-flows",
      type: "kubernetes:core/v1:ConfigMapPatch",
      op: "update" as const,
      name: "wireguard-flows",
      diffPaths: ["data"],
      replaceReasons: [],
      deleteBeforeReplace: false,
    };
    assert.equal(toHop(step).kind, "wireguard-peer");
  });
});
