import { strict as assert } from "node:assert";
import { networkPath } from "../../../test/helpers/network-path";
import { renderHaproxyConfig, sectionName } from "./haproxy-config";
import { judgeHealth, parseBackends } from "./path-health";

const pg = networkPath("orders", { spec: { instanceHost: "pg.team-a.svc.cluster.local", port: 5432 } });
const redis = networkPath("cache", { spec: { instanceHost: "redis.team-a.svc.cluster.local", port: 6379 } });
const backend = (p: typeof pg) => sectionName("bk", p.metadata.name);

describe("proxy: a path's health from HAProxy's own checks", () => {
  it("the rendered health frontend answers each backend by the name the judgement looks up, 64 to a page", () => {
    const connections = Array.from({ length: 65 }, (_, i) => ({
      id: `c${i}`,
      instanceHost: "db",
      port: 5432,
    }));
    const assignments = Object.fromEntries(connections.map((c, i) => [c.id, 30000 + i]));
    const config = renderHaproxyConfig(connections, assignments);
    const pages = config.split("\n").filter((l) => l.includes("http-request return"));
    assert.equal(pages.length, 2);
    assert.match(pages[0]!, / if \{ path \/backends\/0 \}$/);
    assert.match(pages[1]!, / if \{ path \/backends\/1 \}$/);
    // Each page lists `<backend> %[nbsrv(<backend>)]`: together, every connection's backend once.
    const named = pages.flatMap((l) => [...l.matchAll(/(\S+) %\[nbsrv\(\1\)\]/g)].map((m) => m[1]));
    assert.deepEqual(named.sort(), connections.map((c) => sectionName("bk", c.id)).sort());
    assert.equal(pages[0]!.match(/nbsrv/g)?.length, 64);
  });

  it("parses a page's lines", () => {
    assert.deepEqual(
      [...parseBackends("bk_a 1\nbk_b 0\n\nnoise\n")],
      [
        ["bk_a", 1],
        ["bk_b", 0],
      ],
    );
  });

  it("a backend without a usable server on some pod is InstanceUnreachable, naming host and port and how many pods", () => {
    const pods = [
      {
        pod: "p1",
        backends: new Map([
          [backend(pg), 1],
          [backend(redis), 0],
        ]),
      },
      {
        pod: "p2",
        backends: new Map([
          [backend(pg), 1],
          [backend(redis), 1],
        ]),
      },
    ];
    const h = judgeHealth("np-team-a-proxy", "klutch-network", [pg, redis], 2, pods);
    assert.equal(h.orders?.ready, true);
    assert.deepEqual(
      { ready: h.cache?.ready, reason: h.cache?.reason },
      { ready: false, reason: "InstanceUnreachable" },
    );
    assert.match(h.cache!.message, /redis\.team-a\.svc\.cluster\.local:6379 fail on 1 of 2 proxy pods/);
  });

  it("no Ready pod: every path is ProxyUnavailable; no pod answering, or a pod on an older config: nothing is said", () => {
    const none = judgeHealth("np-team-a-proxy", "klutch-network", [pg], 0, []);
    assert.equal(none.orders?.reason, "ProxyUnavailable");
    assert.match(none.orders.message, /klutch-network\/np-team-a-proxy/);
    assert.deepEqual(judgeHealth("np", "ns", [pg], 2, [{ pod: "p1", backends: undefined }]), {});
    assert.deepEqual(judgeHealth("np", "ns", [pg], 1, [{ pod: "p1", backends: new Map() }]), {});
  });
});
