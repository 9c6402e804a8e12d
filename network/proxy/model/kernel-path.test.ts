import { strict as assert } from "node:assert";
import {
  backendKey,
  backendsDiffer,
  backendsOf,
  connectionBackends,
  instanceTargetOf,
  kernelConnectionProblem,
  mirroredSlices,
} from "./kernel-path";

const ref = { namespace: "team-a", name: "pg" };
const service = { spec: { type: "ClusterIP", ports: [{ name: "pg", port: 5432, protocol: "TCP" }] } };
const slice = (addresses: string[], ready?: boolean, port = 5432, name = "pg") => ({
  addressType: "IPv4",
  endpoints: addresses.map((a) => ({ addresses: [a], conditions: ready === undefined ? {} : { ready } })),
  ports: [{ name, port, protocol: "TCP" }],
});

describe("kernel hop: the instance a connection names", () => {
  it("takes an IPv4 address as the instance's own", () => {
    assert.deepEqual(instanceTargetOf("10.244.0.7"), { kind: "address", address: "10.244.0.7" });
  });

  it("follows a Service's name, with or without the cluster domain and a trailing dot", () => {
    for (const host of ["pg.team-a.svc.cluster.local", "pg.team-a.svc", "PG.team-a.svc.cluster.local."]) {
      assert.deepEqual(instanceTargetOf(host), { kind: "service", namespace: "team-a", name: "pg" }, host);
    }
    assert.deepEqual(instanceTargetOf("pg.team-a.svc.corp.example", "corp.example"), {
      kind: "service",
      namespace: "team-a",
      name: "pg",
    });
  });

  it("refuses any other name, saying what it takes", () => {
    for (const host of ["db.example.com", "pg.team-a", "pg.team-a.svc.other.domain", "10.0.0.300"]) {
      const target = instanceTargetOf(host);
      assert.equal(target.kind, "unsupported", host);
      if (target.kind === "unsupported") {
        assert.match(target.problem, new RegExp(`instanceHost "${host.replace(/\./g, "\\.")}"`));
        assert.match(target.problem, /<service>\.<namespace>\.svc\.cluster\.local/);
      }
    }
  });
});

describe("kernel hop: an instance Service's ready endpoints", () => {
  it("matches the Service port to the slices' port by name and keeps ready (or unset) endpoints", () => {
    const result = backendsOf(ref, 5432, service, [
      slice(["10.244.0.9", "10.244.0.7"]),
      slice(["10.244.0.8"], false),
      slice(["10.244.0.6"], true),
      // Another port name: not this Service port's endpoints.
      slice(["10.244.0.5"], true, 9187, "metrics"),
      { addressType: "IPv6", endpoints: [{ addresses: ["fd00::1"] }], ports: [{ name: "pg", port: 5432 }] },
    ]);
    assert.deepEqual(result, {
      backends: [
        { address: "10.244.0.6", port: 5432 },
        { address: "10.244.0.7", port: 5432 },
        { address: "10.244.0.9", port: 5432 },
      ],
    });
  });

  it("follows a target port that differs from the Service port", () => {
    const result = backendsOf(ref, 5432, service, [slice(["10.244.0.7"], true, 15432)]);
    assert.deepEqual(result, { backends: [{ address: "10.244.0.7", port: 15432 }] });
  });

  it("gives an empty list while no endpoint is ready (the path refuses, as the Service does)", () => {
    assert.deepEqual(backendsOf(ref, 5432, service, [slice(["10.244.0.7"], false)]), { backends: [] });
    assert.deepEqual(backendsOf(ref, 5432, service, []), { backends: [] });
  });

  it("says why when the Service is missing, has no such port, or is an ExternalName", () => {
    assert.deepEqual(backendsOf(ref, 5432, undefined, []), {
      problem: "Service team-a/pg does not exist in the data-service cluster",
    });
    assert.deepEqual(backendsOf(ref, 5433, service, []), {
      problem: "Service team-a/pg has no TCP port 5433 (its ports: 5432)",
    });
    const external = backendsOf(ref, 5432, { spec: { type: "ExternalName" } }, []);
    assert.ok("problem" in external && /ExternalName/.test(external.problem));
  });
});

describe("kernel hop: a connection's backends", () => {
  const conn = { id: "team-a/orders", instanceHost: "pg.team-a.svc.cluster.local", port: 5432 };
  const resolved = {
    [backendKey(conn.instanceHost, 5432)]: { backends: [{ address: "10.244.0.7", port: 5432 }] },
  };

  it("an address is its own backend; a Service name takes what the bridge resolved", () => {
    assert.deepEqual(connectionBackends({ ...conn, instanceHost: "10.1.2.3" }, undefined), {
      backends: [{ address: "10.1.2.3", port: 5432 }],
    });
    assert.deepEqual(connectionBackends(conn, resolved), {
      backends: [{ address: "10.244.0.7", port: 5432 }],
    });
  });

  it("a name nobody resolved, or one that failed, is a problem of that connection only", () => {
    const missing = connectionBackends(conn, {});
    assert.ok("problem" in missing && /were not read/.test(missing.problem));
    const failed = connectionBackends(conn, { [backendKey(conn.instanceHost, 5432)]: { problem: "gone" } });
    assert.deepEqual(failed, { problem: "gone", reason: "HostUnresolved" });
  });

  it("refuses SNI routing, naming the connection and the fix", () => {
    const sni = { ...conn, enhancements: [{ ConnectionType: "tlsSNI", serverName: "pg-1.example.com" }] };
    assert.match(
      kernelConnectionProblem(sni) ?? "",
      /team-a\/orders .*pg-1\.example\.com.*networkConnector\.hop to haproxy/,
    );
    assert.equal(kernelConnectionProblem(conn), undefined);
    const refused = connectionBackends(sni, resolved);
    assert.ok("problem" in refused && refused.reason === "InvalidConnection");
  });
});

describe("kernel hop: mirrored EndpointSlices and change detection", () => {
  it("one slice per target port, addresses sorted", () => {
    assert.deepEqual(
      mirroredSlices([
        { address: "10.0.0.9", port: 5432 },
        { address: "10.0.0.2", port: 15432 },
        { address: "10.0.0.1", port: 5432 },
      ]),
      [
        { index: 0, port: 5432, addresses: ["10.0.0.1", "10.0.0.9"] },
        { index: 1, port: 15432, addresses: ["10.0.0.2"] },
      ],
    );
    assert.deepEqual(mirroredSlices([]), []);
  });

  it("two resolutions differ only in what a path is built from (not in key order)", () => {
    const a = { x: { backends: [{ address: "10.0.0.1", port: 1 }] }, y: { problem: "p" } };
    const b = { y: { problem: "p" }, x: { backends: [{ address: "10.0.0.1", port: 1 }] } };
    assert.equal(backendsDiffer(a, b), false);
    assert.equal(backendsDiffer(a, { ...b, x: { backends: [{ address: "10.0.0.2", port: 1 }] } }), true);
    assert.equal(backendsDiffer(a, { x: a.x }), true);
  });
});
