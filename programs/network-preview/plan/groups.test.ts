import { strict as assert } from "node:assert";
import type { NetworkPathObject } from "../../../lib/bridge/model";
import { networkPath } from "../../../test/helpers/network-path";
import { isPending, planGroups } from "./groups";
import type { ClaimChange, ControlPlaneView } from "./model";

/** A realised path of team-a's proxy group, made by the claim `name` through XR `xr-<name>`. */
function path(
  name: string,
  o: { namespace?: string; generation?: number; observed?: number; deleting?: boolean } = {},
): NetworkPathObject {
  const generation = o.generation ?? 1;
  return networkPath(name, {
    metadata: { generation, ...(o.deleting ? { deletionTimestamp: "2024-01-01T00:00:00Z" } : {}) },
    spec: { consumerNamespace: o.namespace ?? "team-a" },
    status: { observedGeneration: o.observed ?? generation, hostForConsumer: "127.0.0.1", port: 20010 },
  });
}

function claim(name: string, o: Partial<ClaimChange> = {}): ClaimChange {
  return {
    action: "apply",
    namespace: "team-a",
    name,
    implementation: "proxy",
    instanceHost: "10.0.0.9",
    port: 6379,
    ...o,
  };
}

/** The control plane with these paths, each claimed by the claim its XR is named after. */
function view(...paths: NetworkPathObject[]): ControlPlaneView {
  return {
    paths,
    claimXr: new Map(paths.map((p) => [`${p.spec.consumerNamespace}/${p.metadata.name}`, p.spec.connection])),
  };
}

describe("network preview plan: which paths are pending", () => {
  it("a path whose status has caught up with its generation is realised; ahead, unobserved or deleting is pending", () => {
    assert.equal(isPending(path("orders")), false);
    assert.equal(isPending(path("orders", { generation: 2, observed: 1 })), true);
    assert.equal(isPending({ ...path("orders"), status: {} }), true);
    assert.equal(isPending(path("orders", { deleting: true })), true);
  });
});

describe("network preview plan: the groups a change touches", () => {
  it("a claim of an existing path changes that path in its group, which keeps its other paths", () => {
    const [g, ...rest] = planGroups(
      view(path("orders"), path("billing")),
      [claim("orders", { instanceHost: "10.0.0.2", port: 5433, implementation: "wireguard" })],
      false,
    );
    assert.equal(rest.length, 0);
    assert.equal(g?.key, "team-a/proxy", "the path's own group, not the claim's composition");
    assert.deepEqual(
      g?.after.map((p) => [p.metadata.name, p.spec.instanceHost, p.spec.port]),
      [
        ["orders", "10.0.0.2", 5433],
        ["billing", "10.0.0.1", 5432],
      ],
    );
    assert.deepEqual(
      g?.before.map((p) => [p.metadata.name, p.spec.instanceHost]),
      [
        ["orders", "10.0.0.1"],
        ["billing", "10.0.0.1"],
      ],
    );
    assert.deepEqual(g?.added, []);
    assert.deepEqual([...(g?.deletedIds ?? [])], []);
  });

  it("a claim annotated delete takes its path out of the group", () => {
    const [g] = planGroups(
      view(path("orders"), path("billing")),
      [claim("orders", { action: "delete" })],
      false,
    );
    assert.deepEqual(
      g?.after.map((p) => p.metadata.name),
      ["billing"],
    );
    assert.deepEqual([...(g?.deletedIds ?? [])], ["orders"]);
  });

  it("a new claim is a pending path of its namespace's group for its implementation, with its enhancements", () => {
    const enhancements = [{ kind: "tls" }];
    const groups = planGroups(
      view(path("orders")),
      [claim("cache", { implementation: "wireguard", enhancements })],
      false,
    );
    assert.deepEqual(
      groups.map((g) => g.key),
      ["team-a/wireguard"],
    );
    const [g] = groups;
    assert.deepEqual(
      g?.added.map((c) => c.name),
      ["cache"],
    );
    assert.deepEqual(g?.after, [
      {
        metadata: { name: "cache-pending", generation: 1 },
        spec: {
          implementation: "wireguard",
          connection: "cache-pending",
          consumerNamespace: "team-a",
          instanceHost: "10.0.0.9",
          port: 6379,
          enhancements,
        },
      },
    ]);
  });

  it("without claims: only groups with a pending path, or every group with includeAll, sorted by key", () => {
    const paths = view(
      path("orders", { namespace: "team-b" }),
      path("billing", { namespace: "team-a", generation: 2, observed: 1 }),
      path("ledger", { namespace: "team-c", deleting: true }),
    );
    assert.deepEqual(
      planGroups(paths, [], false).map((g) => g.key),
      [],
    );
    assert.deepEqual(
      planGroups(paths, [], true).map((g) => g.key),
      ["team-a/proxy", "team-c/proxy"],
    );
    assert.deepEqual(
      planGroups(paths, [], false, true).map((g) => g.key),
      ["team-a/proxy", "team-b/proxy", "team-c/proxy"],
    );
  });

  it("a deleting path stays in the group's before, leaves its after, and is previewed as deleted", () => {
    const [g] = planGroups(view(path("orders"), path("ledger", { deleting: true })), [], true);
    assert.deepEqual(
      g?.before.map((p) => p.metadata.name),
      ["orders", "ledger"],
    );
    assert.deepEqual(
      g?.after.map((p) => p.metadata.name),
      ["orders"],
    );
    assert.deepEqual([...(g?.deletedIds ?? [])], ["ledger"]);
  });

  it("an environment change's affected namespace brings its groups in unchanged; claims of a removed one are not applied", () => {
    const paths = view(path("orders", { namespace: "team-a" }), path("billing", { namespace: "team-b" }));
    const [a] = planGroups(paths, [], false, false, { affected: ["team-a"] });
    assert.equal(a?.key, "team-a/proxy");
    assert.deepEqual(a?.after, a?.before);
    const groups = planGroups(paths, [claim("cache", { namespace: "team-b" })], false, false, {
      removed: ["team-b"],
    });
    assert.deepEqual(
      groups.map((g) => [g.key, g.after.length, g.added.length]),
      [["team-b/proxy", 0, 0]],
    );
  });
});
