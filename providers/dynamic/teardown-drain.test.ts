import { strict as assert } from "node:assert";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { connectorXrd } from "../../lib/connector-api/xrd";
import { postgresqlInstanceXrd, serviceBindingXrd } from "../../lib/dataservices/xrds";
import { runSerialized } from "../../test/helpers/dynamic-provider";
import { loopbackKubeconfig } from "../../test/helpers/kubeconfig";
import { teardownDrainProvider, type TeardownDrainInputs } from "./teardown-drain";

type Obj = { apiVersion: string; kind: string; metadata: Record<string, any>; spec?: Record<string, any> };

/**
 * A stand-in API server on loopback with just enough of Kubernetes for the drain: list, get,
 * delete and discovery over an in-memory store. Its "controllers" act like Crossplane and
 * the bridge do: a deleted claim takes its XR with it, a composite's composed objects go a
 * few looks later (garbage collection, then their finalizers), and objects listed in `stuck`
 * never go.
 */
async function fakeCluster(objects: Obj[], stuck: string[] = []) {
  const store = new Map<string, Obj>(); // `${group}/${version}/${plural}/${ns}/${name}`
  const kinds = new Map<string, { plural: string; namespaced: boolean }>(); // `${apiVersion}/${kind}`
  const deletes: string[] = [];
  const pluralOf: Record<string, string> = {
    CompositeResourceDefinition: "compositeresourcedefinitions",
    NetworkPath: "networkpaths",
    Object: "objects",
  };
  const keyOf = (o: Obj) => {
    const plural = pluralOf[o.kind] ?? `${o.kind.toLowerCase()}s`;
    kinds.set(`${o.apiVersion}/${o.kind}`, { plural, namespaced: !!o.metadata.namespace });
    return `${o.apiVersion}/${plural}/${o.metadata.namespace ?? ""}/${o.metadata.name}`;
  };
  for (const o of objects) store.set(keyOf(o), o);
  // Composed objects of a deleted XR go after this many further requests.
  const goingAfter = new Map<string, number>();

  const remove = (key: string) => {
    const o = store.get(key);
    if (!o || stuck.includes(o.metadata.name)) return;
    store.delete(key);
    for (const ref of (o.spec?.resourceRefs ?? []) as { apiVersion: string; kind: string; name: string }[]) {
      const composed = [...store.keys()].find((k) => k.endsWith(`/${ref.name}`));
      if (composed) goingAfter.set(composed, 3);
    }
    // A claim's XR goes with it (Crossplane's claim finalizer deletes it).
    for (const [k, x] of store) if (x.spec?.claimRef?.name === o.metadata.name) remove(k);
  };
  const tick = () => {
    for (const [k, n] of goingAfter) {
      if (n <= 1) {
        goingAfter.delete(k);
        remove(k);
      } else goingAfter.set(k, n - 1);
    }
  };

  const server = http.createServer((req, res) => {
    tick();
    const send = (code: number, body: unknown) => {
      res.writeHead(code, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    const notFound = () => send(404, { kind: "Status", apiVersion: "v1", code: 404, reason: "NotFound" });
    const parts = (req.url ?? "").split("?")[0]!.split("/").filter(Boolean); // apis g v [namespaces ns] plural [name]
    if (parts[0] !== "apis") return notFound();
    const [, group, version] = parts;
    const apiVersion = `${group}/${version}`;
    if (parts.length === 3) {
      // Discovery, for KubernetesObjectApi.read.
      const resources = [...kinds]
        .filter(([k]) => k.startsWith(`${apiVersion}/`))
        .map(([k, v]) => ({ name: v.plural, kind: k.split("/").pop(), namespaced: v.namespaced, verbs: [] }));
      return resources.length > 0
        ? send(200, { kind: "APIResourceList", groupVersion: apiVersion, resources })
        : notFound();
    }
    const namespaced = parts[3] === "namespaces";
    const ns = namespaced ? parts[4] : "";
    const [plural, name] = namespaced ? parts.slice(5) : parts.slice(3);
    const prefix = `${apiVersion}/${plural}/`;
    if (!name && req.method === "GET") {
      const items = [...store].filter(([k]) => k.startsWith(prefix)).map(([, o]) => o);
      const known = [...kinds.values()].some((v) => v.plural === plural);
      return known ? send(200, { items }) : notFound();
    }
    const key = [...store.keys()].find((k) => k.startsWith(prefix) && k.endsWith(`/${ns ?? ""}/${name}`));
    if (!key) return notFound();
    if (req.method === "DELETE") {
      deletes.push(`${plural}/${name}`);
      store.get(key)!.metadata.deletionTimestamp = "now";
      remove(key);
      return send(200, {});
    }
    return send(200, store.get(key));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  const kubeconfig = loopbackKubeconfig(port);
  return { kubeconfig, deletes, left: () => [...store.values()], close: () => server.close() };
}

const KLUTCH = "klutch.anynines.com";
const claim = (apiVersion: string, kind: string, ns: string, name: string): Obj => ({
  apiVersion,
  kind,
  metadata: { name, namespace: ns },
  spec: {},
});
const composite = (
  apiVersion: string,
  kind: string,
  name: string,
  claimName: string | undefined,
  refs: Obj[],
) => ({
  apiVersion,
  kind,
  metadata: { name },
  spec: {
    ...(claimName ? { claimRef: { name: claimName } } : {}),
    resourceRefs: refs.map((r) => ({ apiVersion: r.apiVersion, kind: r.kind, name: r.metadata.name })),
  },
});
const cluster = (apiVersion: string, kind: string, name: string): Obj => ({
  apiVersion,
  kind,
  metadata: { name },
});

/** The control plane of the local stack with a binding, its instance and a plain connection live. */
function controlPlane(): Obj[] {
  const xrds = [connectorXrd("klutch-proxy"), serviceBindingXrd(), postgresqlInstanceXrd()] as Obj[];
  const pathOf = (n: string) => cluster(`${KLUTCH}/v1alpha1`, "NetworkPath", n);
  const objectOf = (n: string) => cluster("kubernetes.crossplane.io/v1alpha2", "Object", n);
  const [npPlain, npBinding, jobObject, pgObject] = [
    pathOf("np-plain"),
    pathOf("np-binding"),
    objectOf("role-job"),
    objectOf("pg-deployment"),
  ];
  const bindingConnection = composite(`${KLUTCH}/v1`, "XTCPConnection", "x-binding-conn", undefined, [
    npBinding,
  ]);
  return [
    ...xrds,
    claim(`${KLUTCH}/v1`, "TCPConnection", "cluster-app-2", "plain"),
    composite(`${KLUTCH}/v1`, "XTCPConnection", "x-plain", "plain", [npPlain]),
    npPlain,
    claim("anynines.com/v1", "ServiceBinding", "cluster-app-1", "orders-app"),
    composite("anynines.com/v1", "XServiceBinding", "x-orders-app", "orders-app", [
      bindingConnection,
      jobObject,
    ]),
    bindingConnection,
    npBinding,
    jobObject,
    claim("anynines.com/v1", "PostgresqlInstance", "cluster-app-1", "orders"),
    composite("anynines.com/v1", "XPostgresqlInstance", "x-orders", "orders", [pgObject]),
    pgObject,
  ];
}

describe("teardown drain (dynamic provider)", function () {
  this.timeout(30_000);

  it("deletes the app clusters' consumer objects, then bindings before instances, and returns when nothing they composed is left", async () => {
    const cp = await fakeCluster(controlPlane());
    const app = await fakeCluster([
      { ...(connectorXrd("klutch-proxy") as Obj) },
      claim(`${KLUTCH}/v1`, "TCPConnection", "default", "plain"),
    ]);
    try {
      const inputs: TeardownDrainInputs = {
        kubeconfig: cp.kubeconfig,
        appClusterKubeconfigs: { "app-1": app.kubeconfig, gone: cp.kubeconfig.replace(/:\d+/, ":1") },
        timeoutSeconds: 20,
      };
      const out = await runSerialized(
        teardownDrainProvider,
        `async (p) => { await p.delete("teardown-drain", ${JSON.stringify(inputs)}); return "done"; }`,
      );
      assert.equal(out, "done", JSON.stringify(out));
      assert.deepEqual(app.deletes, ["tcpconnections/plain"]);
      // The binding (it acts on the instance) goes before the instance.
      const order = cp.deletes.filter((d) =>
        /^(servicebindings|postgresqlinstances|tcpconnections)\//.test(d),
      );
      assert.deepEqual(order, [
        "servicebindings/orders-app",
        "postgresqlinstances/orders",
        "tcpconnections/plain",
      ]);
      // The composite no claim made (the binding's connection) is deleted too; only the XRDs stay.
      assert.deepEqual(
        cp.left().map((o) => o.kind),
        ["CompositeResourceDefinition", "CompositeResourceDefinition", "CompositeResourceDefinition"],
      );
    } finally {
      cp.close();
      app.close();
    }
  });

  it("stops at its deadline with an error that names what is still there, and touches nothing after", async () => {
    const cp = await fakeCluster(controlPlane(), ["np-plain"]);
    try {
      const inputs: TeardownDrainInputs = {
        kubeconfig: cp.kubeconfig,
        appClusterKubeconfigs: {},
        timeoutSeconds: 3,
      };
      const out = (await runSerialized(
        teardownDrainProvider,
        `async (p) => { await p.delete("teardown-drain", ${JSON.stringify(inputs)}); return {}; }`,
      )) as { error?: string };
      assert.match(out.error ?? "", /stopped before removing Crossplane and the bridge: after 3s/);
      assert.match(out.error ?? "", /1 composed object \(NetworkPath np-plain\)/);
      assert.match(out.error ?? "", /run the destroy again/);
      assert.ok(!cp.deletes.some((d) => d.startsWith("compositeresourcedefinitions")), "no XRD is deleted");
    } finally {
      cp.close();
    }
  });

  it("never asks for a replacement, whatever changed", async () => {
    const olds: TeardownDrainInputs = {
      kubeconfig: "a",
      appClusterKubeconfigs: { x: "1" },
      timeoutSeconds: 900,
    };
    const changed = await teardownDrainProvider.diff("id", olds, {
      ...olds,
      appClusterKubeconfigs: {},
      kubeconfig: "b",
    });
    assert.deepEqual([changed.changes, changed.replaces], [true, []]);
    const same = await teardownDrainProvider.diff("id", olds, { ...olds });
    assert.equal(same.changes, false);
  });

  it("does nothing where Crossplane's XRD API is already gone", async () => {
    const cp = await fakeCluster([]);
    try {
      const inputs: TeardownDrainInputs = {
        kubeconfig: cp.kubeconfig,
        appClusterKubeconfigs: {},
        timeoutSeconds: 5,
      };
      const out = await runSerialized(
        teardownDrainProvider,
        `async (p) => { await p.delete("teardown-drain", ${JSON.stringify(inputs)}); return "done"; }`,
      );
      assert.equal(out, "done");
      assert.deepEqual(cp.deletes, []);
    } finally {
      cp.close();
    }
  });
});
