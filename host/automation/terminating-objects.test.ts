import { strict as assert } from "node:assert";
import type { ObjectRef } from "../../lib/lifecycle/drain-plan";
import type { LiveObject } from "../../lib/lifecycle/stack-objects";
import { terminatingOnCluster, type ObjectReader } from "./terminating-objects";

const SINCE = "2026-11-26T20:00:00.000Z";

/** An HTTP error as @kubernetes/client-node throws it (ApiException: `code`). */
const httpError = (code: number) => Object.assign(new Error(`HTTP ${code}`), { code });

/**
 * A stand-in for KubernetesObjectApi over an in-memory cluster: it records each call, and
 * answers a list of a kind in `refusedLists` with that status, of a kind in `unserved` with 404.
 */
function fakeApi(
  live: (ObjectRef & { deleting?: boolean })[],
  options: { refusedLists?: Record<string, number>; unserved?: string[]; unreachable?: boolean } = {},
) {
  const calls: string[] = [];
  const item = (o: ObjectRef & { deleting?: boolean }): LiveObject => ({
    metadata: {
      name: o.name,
      ...(o.namespace ? { namespace: o.namespace } : {}),
      ...(o.deleting ? { deletionTimestamp: new Date(SINCE), finalizers: ["klutch.test/hold"] } : {}),
    },
  });
  const api: ObjectReader = {
    read(spec) {
      const ns = spec.metadata.namespace;
      calls.push(`GET ${spec.kind} ${ns ? `${ns}/` : ""}${spec.metadata.name}`);
      if (options.unreachable) return Promise.reject(new Error("connect ECONNREFUSED"));
      if (options.unserved?.includes(spec.kind)) return Promise.reject(httpError(404));
      const found = live.find(
        (o) => o.kind === spec.kind && o.name === spec.metadata.name && o.namespace === ns,
      );
      return found ? Promise.resolve(item(found)) : Promise.reject(httpError(404));
    },
    list(apiVersion, kind, namespace) {
      calls.push(`LIST ${kind}${namespace ? ` ${namespace}` : ""}`);
      if (options.unreachable) return Promise.reject(new Error("connect ECONNREFUSED"));
      if (options.unserved?.includes(kind)) return Promise.reject(httpError(404));
      const refused = options.refusedLists?.[kind];
      if (refused) return Promise.reject(httpError(refused));
      const items = live
        .filter(
          (o) => o.apiVersion === apiVersion && o.kind === kind && (!namespace || o.namespace === namespace),
        )
        .map(item);
      return Promise.resolve({ items });
    },
  };
  return { api, calls };
}

const cm = (name: string, namespace = "ns"): ObjectRef => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  namespace,
  name,
});
const ns = (name: string): ObjectRef => ({ apiVersion: "v1", kind: "Namespace", name });

describe("terminating objects on a cluster", () => {
  const stack = [cm("a"), cm("b"), cm("c"), cm("d", "other"), ns("ns"), ns("other")];
  const cluster = [
    { ...cm("a"), deleting: true },
    cm("b"),
    // c is gone
    { ...cm("d", "other"), deleting: true },
    { ...cm("e"), deleting: true }, // not the stack's
    ns("ns"),
    { ...ns("other"), deleting: true },
  ];

  it("lists each kind in each namespace once, and GETs an object alone of its kind there", async () => {
    const { api, calls } = fakeApi(cluster);
    const found = await terminatingOnCluster(api, stack);
    assert.deepEqual(calls.sort(), ["GET ConfigMap other/d", "LIST ConfigMap ns", "LIST Namespace"]);
    assert.deepEqual(
      found.map((o) => `${o.kind} ${o.namespace ?? ""}/${o.name}`),
      ["ConfigMap ns/a", "ConfigMap other/d", "Namespace /other"],
    );
    assert.deepEqual(found[0], { ...cm("a"), since: SINCE, finalizers: ["klutch.test/hold"] });
  });

  it("finds what one GET per object found", async () => {
    const { api } = fakeApi(cluster);
    const { api: refusing } = fakeApi(cluster, { refusedLists: { ConfigMap: 403, Namespace: 500 } });
    const byList = await terminatingOnCluster(api, stack);
    const byGet = await terminatingOnCluster(refusing, stack);
    assert.deepEqual(byGet, byList);
  });

  it("a refused list asks for each object; a kind not served has none terminating", async () => {
    const refused = fakeApi(cluster, { refusedLists: { ConfigMap: 403 } });
    await terminatingOnCluster(refused.api, stack);
    assert.deepEqual(
      refused.calls.filter((c) => c.includes("ConfigMap ns")),
      ["LIST ConfigMap ns", "GET ConfigMap ns/a", "GET ConfigMap ns/b", "GET ConfigMap ns/c"],
    );
    const unserved = fakeApi(cluster, { unserved: ["ConfigMap"] });
    const found = await terminatingOnCluster(unserved.api, stack);
    assert.deepEqual(
      found.map((o) => o.name),
      ["other"],
    );
    assert.equal(unserved.calls.filter((c) => c.includes("ConfigMap ns")).length, 1);
  });

  it("an unreachable cluster is left to the engine: nothing found, no further requests", async () => {
    const many = Array.from({ length: 40 }, (_, i) => cm(`x${i}`, `ns${i}`));
    const { api, calls } = fakeApi(cluster, { unreachable: true });
    assert.deepEqual(await terminatingOnCluster(api, many), []);
    assert.equal(calls.length, 16, "the first batch is in flight; nothing after it");
  });
});
