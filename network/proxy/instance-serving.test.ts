import { strict as assert } from "node:assert";
import { networkPath } from "../../test/helpers/network-path";
import type { InstanceReads } from "./instance-backends";
import { unservedPaths } from "./instance-serving";

const service = { spec: { type: "ClusterIP", ports: [{ name: "postgresql", port: 5432 }] } };
const paths = [
  networkPath("orders", { spec: { instanceHost: "pg.team-a.svc.cluster.local", port: 5432 } }),
  networkPath("billing", { spec: { instanceHost: "pg.team-a.svc.cluster.local", port: 5432 } }),
  networkPath("cache", { spec: { instanceHost: "redis.team-a.svc.cluster.local", port: 6379 } }),
];

describe("proxy: the paths whose instance Service has no endpoint (the health reader's reads)", () => {
  it("reads each Service once, and names every path of an unserved one", async () => {
    const asked: string[] = [];
    const reads: InstanceReads = {
      service: (_namespace, name) => {
        asked.push(`service ${name}`);
        return Promise.resolve(name === "pg" ? service : undefined);
      },
      slices: (_namespace, name) => {
        asked.push(`slices ${name}`);
        return Promise.resolve([]);
      },
    };
    const unserved = await unservedPaths(reads, paths);
    assert.deepEqual(
      Object.keys(unserved).sort(),
      ["billing", "orders"],
      "no Service: redis is HAProxy's to judge",
    );
    assert.deepEqual(asked.sort(), ["service pg", "service redis", "slices pg", "slices redis"]);
  });

  it("a read that fails (403 before the rights, an API server that does not answer) says nothing of its paths", async () => {
    const reads: InstanceReads = {
      service: (_namespace, name) =>
        name === "pg"
          ? Promise.reject(Object.assign(new Error("forbidden"), { code: 403 }))
          : Promise.resolve(service),
      slices: () => Promise.resolve([]),
    };
    assert.deepEqual(Object.keys(await unservedPaths(reads, paths)), []);
  });
});
