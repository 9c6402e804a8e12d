import { strict as assert } from "node:assert";
import {
  lookupsByKind,
  objectsByCluster,
  plainValue,
  terminatingAmong,
  terminatingMessage,
  terminatingObject,
  type StateResource,
} from "./stack-objects";

const SECRET = (value: unknown) => ({
  "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
  plaintext: JSON.stringify(value),
});
const KUBECONFIG = "apiVersion: v1\nkind: Config\nclusters: []\n";

describe("a stack's Kubernetes objects by cluster", () => {
  const provider = (name: string, kubeconfig: unknown): StateResource => ({
    urn: `urn:pulumi:local::klutch::pulumi:providers:kubernetes::${name}`,
    type: "pulumi:providers:kubernetes",
    id: `${name}-id`,
    custom: true,
    inputs: { kubeconfig },
  });
  const object = (name: string, prov: string, outputs: Record<string, unknown>): StateResource => ({
    urn: `urn:pulumi:local::klutch::kubernetes:any::${name}`,
    type: "kubernetes:core/v1:ConfigMap",
    custom: true,
    provider: `urn:pulumi:local::klutch::pulumi:providers:kubernetes::${prov}::${prov}-id`,
    outputs,
  });

  it("groups objects under the provider they were made through, reading shown secrets", () => {
    const clusters = objectsByCluster([
      provider("cp", SECRET(KUBECONFIG)),
      provider("encrypted", {
        "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
        ciphertext: "x",
      }),
      object("a", "cp", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "a", namespace: "ns" } }),
      object("b", "cp", {
        apiVersion: "apiextensions.crossplane.io/v1",
        kind: "CompositeResourceDefinition",
        metadata: SECRET({ name: "x.g" }),
      }),
      object("c", "encrypted", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } }),
      object("no-outputs", "cp", {}),
      { urn: "u", type: "klutch:index:Environment", custom: false },
    ]);
    assert.equal(clusters.length, 1);
    assert.equal(clusters[0]?.kubeconfig, KUBECONFIG);
    assert.deepEqual(
      clusters[0]?.objects.map((o) => [o.kind, o.namespace, o.name]),
      [
        ["ConfigMap", "ns", "a"],
        ["CompositeResourceDefinition", undefined, "x.g"],
      ],
    );
  });

  it("unwraps only Pulumi's secret envelope", () => {
    assert.equal(plainValue(SECRET("s")), "s");
    assert.deepEqual(plainValue({ a: 1 }), { a: 1 });
  });

  it("looks at each kind in each namespace once, in the order the objects come", () => {
    const cm = (name: string, namespace?: string) => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      name,
      ...(namespace ? { namespace } : {}),
    });
    const ns = (name: string) => ({ apiVersion: "v1", kind: "Namespace", name });
    const lookups = lookupsByKind([cm("a", "x"), ns("x"), cm("b", "y"), cm("c", "x"), ns("y")]);
    assert.deepEqual(
      lookups.map((l) => [l.kind, l.namespace, l.objects.map((o) => o.name)]),
      [
        ["ConfigMap", "x", ["a", "c"]],
        ["Namespace", undefined, ["x", "y"]],
        ["ConfigMap", "y", ["b"]],
      ],
    );
    assert.equal("namespace" in lookups[1]!, false);
    assert.deepEqual(lookupsByKind([]), []);
  });

  it("an object is terminating when it is there with a deletionTimestamp, string or Date", () => {
    const ref = { apiVersion: "v1", kind: "ConfigMap", namespace: "ns", name: "a" };
    const since = "2026-11-26T20:00:00Z";
    assert.deepEqual(terminatingObject(ref, { metadata: { name: "a", deletionTimestamp: since } }), {
      ...ref,
      since: "2026-11-26T20:00:00.000Z",
      finalizers: [],
    });
    assert.deepEqual(
      terminatingObject(ref, {
        metadata: { name: "a", deletionTimestamp: new Date(since), finalizers: ["klutch.test/hold"] },
      })?.finalizers,
      ["klutch.test/hold"],
    );
    assert.equal(terminatingObject(ref, { metadata: { name: "a" } }), undefined);
    assert.equal(terminatingObject(ref, undefined), undefined);
    const clusterScoped = terminatingObject(
      { apiVersion: "v1", kind: "Namespace", name: "x" },
      { metadata: { name: "x", deletionTimestamp: since } },
    );
    assert.equal(clusterScoped && "namespace" in clusterScoped, false);
  });

  it("judges a kind's objects by one list of it: missing or alive is not terminating", () => {
    const since = "2026-11-26T20:00:00.000Z";
    const lookup = {
      apiVersion: "v1",
      kind: "ConfigMap",
      namespace: "ns",
      objects: ["gone", "going", "alive", "held"].map((name) => ({
        apiVersion: "v1",
        kind: "ConfigMap",
        namespace: "ns",
        name,
      })),
    };
    const found = terminatingAmong(lookup, [
      { metadata: { name: "held", namespace: "ns", deletionTimestamp: since, finalizers: ["f"] } },
      { metadata: { name: "alive", namespace: "ns" } },
      { metadata: { name: "going", namespace: "ns", deletionTimestamp: since } },
      { metadata: { name: "not-ours", namespace: "ns", deletionTimestamp: since } },
    ]);
    assert.deepEqual(
      found.map((o) => [o.name, o.namespace, o.finalizers]),
      [
        ["going", "ns", []],
        ["held", "ns", ["f"]],
      ],
    );
    // Without a namespace, a namespaced item of the same name is another object.
    const namespaces = {
      apiVersion: "v1",
      kind: "Namespace",
      objects: [{ apiVersion: "v1", kind: "Namespace", name: "x" }],
    };
    assert.deepEqual(
      terminatingAmong(namespaces, [{ metadata: { name: "x", namespace: "y", deletionTimestamp: since } }]),
      [],
    );
    assert.equal(
      terminatingAmong(namespaces, [{ metadata: { name: "x", deletionTimestamp: since } }]).length,
      1,
    );
  });

  it("names each object, what holds it, and what to do", () => {
    const text = terminatingMessage(
      "local",
      [
        {
          apiVersion: "v1",
          kind: "ConfigMap",
          namespace: "ns",
          name: "a",
          since: "2026-11-26T20:00:00.000Z",
          finalizers: ["klutch.test/hold"],
        },
        {
          apiVersion: "v1",
          kind: "Namespace",
          name: "bind",
          since: "2026-11-26T20:00:00.000Z",
          finalizers: [],
        },
      ],
      180,
    );
    assert.match(text, /^2 objects of stack "local" are being deleted, and they are still there after 180s:/);
    assert.match(text, /ConfigMap ns\/a: deleted since 2026-11-26T20:00:00.000Z, held by klutch.test\/hold/);
    assert.match(text, /Namespace bind: .* held by its dependents/);
    assert.match(text, /Nothing was changed/);
  });
});
