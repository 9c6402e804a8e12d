import { strict as assert } from "node:assert";
import { networkPath } from "../../../test/helpers/network-path";
import { judgeKernelHealth, kernelDials } from "./kernel-health";
import { kernelPortName } from "./kernel-path";

const pg = networkPath("orders", { spec: { instanceHost: "pg.team-a.svc.cluster.local", port: 5432 } });
const redis = networkPath("cache", { spec: { instanceHost: "redis.team-a.svc.cluster.local", port: 6379 } });
const service = (clusterIP: string | undefined, ports: Record<string, number>) => ({
  spec: {
    ...(clusterIP === undefined ? {} : { clusterIP }),
    ports: Object.entries(ports).map(([id, port]) => ({ name: kernelPortName(id), port })),
  },
});

describe("proxy: a kernel path's health from a dial through its Service", () => {
  it("dials each path at the ClusterIP port the kernel path named after its connection; a path without a port (not placed, or refused) is not dialled", () => {
    const dials = kernelDials(service("10.96.0.7", { orders: 30200 }), [pg, redis]);
    assert.deepEqual(dials, [
      { id: "orders", address: "10.96.0.7", port: 30200, instance: "pg.team-a.svc.cluster.local:5432" },
    ]);
  });

  it("no Service, no ClusterIP yet, or a headless one: nothing to dial", () => {
    assert.deepEqual(kernelDials(undefined, [pg]), []);
    assert.deepEqual(kernelDials(service(undefined, { orders: 30200 }), [pg]), []);
    assert.deepEqual(kernelDials(service("None", { orders: 30200 }), [pg]), []);
  });

  it("an accepted connection is Ready; a refused one is InstanceUnreachable and says what refuses (kube-proxy not yet programmed, or the instance)", () => {
    const health = judgeKernelHealth("klutch-network/np-team-a-proxy", [
      { id: "orders", address: "10.96.0.7", port: 30200, instance: "pg:5432", outcome: "connected" },
      { id: "cache", address: "10.96.0.7", port: 30201, instance: "redis:6379", outcome: "refused" },
    ]);
    assert.equal(health.orders?.ready, true);
    assert.equal(health.orders?.reason, "ConnectivityEstablished");
    assert.equal(health.cache?.ready, false);
    assert.equal(health.cache?.reason, "InstanceUnreachable");
    assert.match(
      health.cache.message,
      /klutch-network\/np-team-a-proxy port 30201 \(10\.96\.0\.7:30201\) is refused/,
    );
    assert.match(
      health.cache.message,
      /kube-proxy has not programmed the path's endpoints yet, or the instance redis:6379/,
    );
  });

  it("no dial answered at all: the bridge does not reach the Service network, so nothing is said; one unanswered beside an answer is not Ready", () => {
    const silent = { address: "10.96.0.7", instance: "pg:5432", outcome: "no-answer" as const };
    assert.deepEqual(
      judgeKernelHealth("ns/p", [
        { ...silent, id: "a", port: 1 },
        { ...silent, id: "b", port: 2 },
      ]),
      {},
    );
    const mixed = judgeKernelHealth("ns/p", [
      { ...silent, id: "a", port: 1 },
      { ...silent, id: "b", port: 2, outcome: "connected" },
    ]);
    assert.equal(mixed.a?.ready, false);
    assert.match(mixed.a.message, /got no answer/);
    assert.equal(mixed.b?.ready, true);
  });
});
