import { strict as assert } from "node:assert";
import { unservedOf, type InstanceReads } from "./instance-reads";
import {
  servicesNamed,
  withUnservedBut,
  type EndpointSliceLike,
  type InstanceServiceLike,
} from "../contract/instance-service";

const service = (port: number): InstanceServiceLike => ({
  spec: { clusterIP: "10.96.0.9", ports: [{ name: "pg", port }] },
});
const slice = (ready: boolean): EndpointSliceLike => ({
  ports: [{ name: "pg", port: 5432 }],
  endpoints: [{ addresses: ["10.244.0.7"], conditions: { ready } }],
});

/** Reads from a table of Services and their slices; a name in `failing` throws as a 403 would. */
function reads(
  table: Record<string, { service: InstanceServiceLike; slices: EndpointSliceLike[] }>,
  failing: string[] = [],
): InstanceReads & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    service: (ns, name) => {
      calls.push(`${ns}/${name}`);
      if (failing.includes(`${ns}/${name}`)) return Promise.reject(new Error("forbidden"));
      return Promise.resolve(table[`${ns}/${name}`]?.service);
    },
    slices: (ns, name) => Promise.resolve(table[`${ns}/${name}`]?.slices ?? []),
  };
}

describe("instance reads shared by the proxy's and WireGuard's health readers", () => {
  it("groups paths by the Service their host names, leaving addresses and other names out", () => {
    const named = servicesNamed([
      { id: "a", host: "pg.data.svc.cluster.local", port: 5432 },
      { id: "b", host: "pg.data.svc", port: 5433 },
      { id: "c", host: "10.0.0.4", port: 5432 },
      { id: "d", host: "pg.service.dc1.consul", port: 5432 },
    ]);
    assert.deepEqual(
      [...named.entries()],
      [
        [
          "data/pg",
          {
            ref: { namespace: "data", name: "pg" },
            paths: [
              { id: "a", port: 5432 },
              { id: "b", port: 5433 },
            ],
          },
        ],
      ],
    );
  });

  it("names a Service with no ready endpoint, a missing one only when asked, and says nothing when a read fails", async () => {
    const named = servicesNamed([
      { id: "down", host: "pg.data.svc.cluster.local", port: 5432 },
      { id: "up", host: "ok.data.svc.cluster.local", port: 5432 },
      { id: "gone", host: "old.data.svc.cluster.local", port: 5432 },
      { id: "hidden", host: "secret.other.svc.cluster.local", port: 5432 },
    ]);
    const r = reads(
      {
        "data/pg": { service: service(5432), slices: [slice(false)] },
        "data/ok": { service: service(5432), slices: [slice(true)] },
      },
      ["other/secret"],
    );
    const withMissing = await unservedOf(r, named, { missing: true });
    assert.deepEqual(Object.keys(withMissing).sort(), ["down", "gone"]);
    assert.match(withMissing.down!, /^Service data\/pg has no ready endpoint for port 5432/);
    assert.match(withMissing.gone!, /^Service data\/old does not exist/);
    assert.deepEqual(Object.keys(await unservedOf(r, named)), ["down"]);
  });

  it("reads each Service once however many paths name it", async () => {
    const r = reads({ "data/pg": { service: service(5432), slices: [slice(true)] } });
    await unservedOf(
      r,
      servicesNamed([
        { id: "a", host: "pg.data.svc.cluster.local", port: 5432 },
        { id: "b", host: "pg.data.svc.cluster.local", port: 5432 },
      ]),
    );
    assert.deepEqual(r.calls, ["data/pg"]);
  });

  it("an unserved path is InstanceUnreachable unless its own pods are missing", () => {
    const gatewayDown = { ready: false, reason: "GatewayUnavailable", message: "no gateway pod" };
    const usable = { ready: true, reason: "ConnectivityEstablished", message: "" };
    assert.deepEqual(
      withUnservedBut(
        { a: usable, b: gatewayDown, c: usable },
        { a: "no endpoint", b: "no endpoint" },
        "GatewayUnavailable",
      ),
      {
        a: { ready: false, reason: "InstanceUnreachable", message: "no endpoint" },
        b: gatewayDown,
        c: usable,
      },
    );
  });
});
