import { strict as assert } from "node:assert";
import {
  BIND_GROUP,
  BIND_KINDS,
  BIND_PLURALS,
  BIND_VERSION,
  EXAMPLE_BACKEND_GROUP,
  EXAMPLE_BACKEND_VERSION,
  bindCrds,
  type BindKindKey,
  type CustomResourceDefinition,
  type Schema,
} from "./crds";
import { invalidSamplesOf, seedServiceBindingsTemplate, validSamples } from "../../test/helpers/bind-samples";
import { validateAgainstSchema } from "../../test/helpers/openapi-validate";

// The builders' own form is the v1.5.0 one; v1.4.0's differences are tested in bind-contract.test.ts.
const crds = bindCrds("v1.5.0", { "app.kubernetes.io/part-of": "klutch" });
const kindKeys = Object.keys(BIND_KINDS) as BindKindKey[];

function crdOf(key: BindKindKey): CustomResourceDefinition {
  const found = crds.find((c) => c.spec.names.kind === BIND_KINDS[key]);
  assert.ok(found, `no CRD for ${key}`);
  return found;
}
const schemaOf = (key: BindKindKey): Schema => {
  const [version] = crdOf(key).spec.versions;
  assert.ok(version);
  return version.schema.openAPIV3Schema;
};

/** Follows properties/items down a dotted path (`spec.versions[].name`). */
function nodeAt(schema: Schema, path: string): Schema {
  let node: Schema | undefined = schema;
  for (const part of path.split(".")) {
    const name = part.replace(/\[\]$/, "");
    node = node?.properties?.[name];
    if (part.endsWith("[]")) node = node?.items;
    assert.ok(node, `no schema at ${path} (stopped at ${part})`);
  }
  return node;
}

/** Every schema node with its path, depth first. */
function* nodes(schema: Schema, path = ""): Generator<[string, Schema]> {
  yield [path, schema];
  for (const [name, child] of Object.entries(schema.properties ?? {})) yield* nodes(child, `${path}.${name}`);
  if (schema.items) yield* nodes(schema.items, `${path}[]`);
  if (schema.additionalProperties) yield* nodes(schema.additionalProperties, `${path}{}`);
}

describe("klutch-bind CRDs", () => {
  it("has one CRD per kind, named <plural>.<group>, in the right group", () => {
    assert.equal(crds.length, 6);
    for (const key of kindKeys) {
      const crd = crdOf(key);
      const group = key === "apiServiceExportTemplate" ? EXAMPLE_BACKEND_GROUP : BIND_GROUP;
      assert.equal(crd.spec.group, group, key);
      assert.equal(crd.metadata.name, `${BIND_PLURALS[key]}.${group}`);
      assert.equal(crd.spec.names.plural, BIND_PLURALS[key]);
      assert.equal(crd.spec.names.singular, BIND_KINDS[key].toLowerCase());
      assert.equal(crd.spec.names.listKind, `${BIND_KINDS[key]}List`);
      assert.deepEqual(crd.spec.names.categories, ["kube-bindings"]);
      assert.equal(crd.apiVersion, "apiextensions.k8s.io/v1");
      assert.equal(crd.kind, "CustomResourceDefinition");
    }
    assert.equal(new Set(crds.map((c) => c.metadata.name)).size, 6);
    assert.equal(BIND_GROUP, "klutch.anynines.com");
    assert.equal(EXAMPLE_BACKEND_GROUP, "example-backend.klutch.anynines.com");
  });

  it("makes every kind but APIServiceBinding namespaced, with the status subresource, as the Go markers say", () => {
    for (const crd of crds) {
      const scope = crd.spec.names.kind === "APIServiceBinding" ? "Cluster" : "Namespaced";
      assert.equal(crd.spec.scope, scope, crd.metadata.name);
      assert.deepEqual(crd.spec.versions[0]?.subresources, { status: {} });
    }
  });

  it("gives only APIServiceBinding a short name (sb)", () => {
    assert.deepEqual(
      crds.filter((c) => c.spec.names.shortNames).map((c) => [c.spec.names.kind, c.spec.names.shortNames]),
      [["APIServiceBinding", ["sb"]]],
    );
  });

  it("serves and stores exactly one version, v1alpha1", () => {
    for (const crd of crds) {
      const expected = crd.spec.group === BIND_GROUP ? BIND_VERSION : EXAMPLE_BACKEND_VERSION;
      assert.deepEqual(
        crd.spec.versions.map((v) => [v.name, v.served, v.storage]),
        [[expected, true, true]],
      );
    }
  });

  it("carries the labels it is given, without sharing the object between CRDs", () => {
    for (const crd of crds) assert.deepEqual(crd.metadata.labels, { "app.kubernetes.io/part-of": "klutch" });
    crds[0]!.metadata.labels.extra = "x";
    assert.equal(crds[1]!.metadata.labels.extra, undefined);
    assert.deepEqual(bindCrds("v1.4.0")[0]?.metadata.labels, {});
  });

  it("has the printer columns of the kubebuilder markers", () => {
    const columns = (key: BindKindKey) =>
      crdOf(key).spec.versions[0]?.additionalPrinterColumns?.map((c) => `${c.name}:${c.priority ?? 0}`);
    assert.deepEqual(columns("apiServiceBinding"), [
      "Provider:0",
      "Resources:1",
      "Ready:0",
      "Message:0",
      "Age:0",
    ]);
    assert.deepEqual(columns("clusterBinding"), [
      "Konnector Version:0",
      "Last Heartbeat:0",
      "Ready:0",
      "Age:0",
    ]);
    assert.deepEqual(columns("apiServiceExportRequest"), ["Ready:0", "Age:0"]);
    assert.deepEqual(columns("apiServiceExportTemplate"), ["Established:5", "Age:0"]);
    assert.deepEqual(columns("apiServiceNamespace"), ["Namespace:0", "Age:0"]);
  });

  describe("structural schemas", () => {
    for (const key of kindKeys) {
      it(`${key}: every node is typed, int-or-string and preserved nodes excepted`, () => {
        for (const [path, node] of nodes(schemaOf(key))) {
          if (node["x-kubernetes-int-or-string"]) {
            assert.equal(node.type, undefined, path);
            assert.deepEqual(node.anyOf, [{ type: "integer" }, { type: "string" }], path);
            continue;
          }
          assert.equal(node.anyOf, undefined, `${path}: anyOf only for int-or-string`);
          if (node["x-kubernetes-preserve-unknown-fields"]) assert.equal(node.type, "object", path);
          assert.ok(node.type, `${path} has no type`);
          assert.ok(
            !(node.properties && node.additionalProperties),
            `${path}: properties and additionalProperties`,
          );
          if (node.type !== "object")
            assert.equal(node.properties, undefined, `${path}: properties on ${node.type}`);
          if (node.type === "array") assert.ok(node.items, `${path}: array without items`);
        }
      });

      it(`${key}: required names exist, list-map keys are required or defaulted`, () => {
        for (const [path, node] of nodes(schemaOf(key))) {
          for (const name of node.required ?? [])
            assert.ok(node.properties?.[name], `${path}.${name} required, unknown`);
          for (const k of node["x-kubernetes-list-map-keys"] ?? []) {
            const item = node.items as Schema;
            assert.ok(
              item.required?.includes(k) || item.properties?.[k]?.default !== undefined,
              `${path}: key ${k}`,
            );
          }
        }
      });

      it(`${key}: defaults validate against their own schema`, () => {
        for (const [path, node] of nodes(schemaOf(key))) {
          if (node.default === undefined) continue;
          assert.deepEqual(validateAgainstSchema(node, node.default), [], `default at ${path}`);
        }
      });

      it(`${key}: leaves metadata to the API server`, () => {
        assert.deepEqual(schemaOf(key).properties?.metadata, { type: "object" });
      });
    }
  });

  it("requires what the Go types mark +required", () => {
    const required = (key: BindKindKey, path?: string) =>
      (path ? nodeAt(schemaOf(key), path) : schemaOf(key)).required ?? [];
    assert.deepEqual(required("apiServiceExportRequest"), ["spec"]);
    assert.deepEqual(required("apiServiceExportRequest", "spec"), ["resources"]);
    assert.deepEqual(required("apiServiceExportRequest", "spec.resources[]"), ["resource"]);
    assert.deepEqual(required("apiServiceExportRequest", "spec.resources[].permissionClaims[]"), [
      "resource",
      "version",
    ]);
    assert.deepEqual(required("apiServiceExport", "spec"), [
      "group",
      "informerScope",
      "names",
      "scope",
      "versions",
    ]);
    assert.deepEqual(required("apiServiceExport", "spec.versions[]"), [
      "name",
      "schema",
      "served",
      "storage",
    ]);
    assert.deepEqual(required("apiServiceExport", "spec.names"), ["kind", "plural"]);
    // APIServiceBinding and APIServiceNamespace: spec has no +required marker upstream.
    assert.deepEqual(required("apiServiceBinding"), []);
    assert.deepEqual(required("apiServiceNamespace"), []);
    assert.deepEqual(required("apiServiceBinding", "spec"), ["kubeconfigSecretRef"]);
    assert.deepEqual(required("apiServiceBinding", "spec.kubeconfigSecretRef"), ["key", "name", "namespace"]);
    assert.deepEqual(required("apiServiceBinding", "spec.permissionClaims[]"), [
      "resource",
      "state",
      "version",
    ]);
    assert.deepEqual(required("clusterBinding", "spec"), ["kubeconfigSecretRef", "providerPrettyName"]);
    assert.deepEqual(required("clusterBinding", "spec.kubeconfigSecretRef"), ["key", "name"]);
    assert.deepEqual(required("apiServiceExportTemplate", "spec"), ["APIServiceSelector"]);
    assert.deepEqual(required("apiServiceExportTemplate", "spec.APIServiceSelector"), ["resource"]);
    assert.deepEqual(required("clusterBinding", "status.conditions[]"), [
      "lastTransitionTime",
      "status",
      "type",
    ]);
  });

  it("keeps raw extensions as sent", () => {
    const preserved = kindKeys.flatMap((key) =>
      [...nodes(schemaOf(key))]
        .filter(([, n]) => n["x-kubernetes-preserve-unknown-fields"])
        .map(([path]) => `${key}${path}`),
    );
    assert.deepEqual(preserved, [
      "apiServiceExportRequest.spec.parameters",
      "apiServiceExport.spec.versions[].schema.openAPIV3Schema",
      "clusterBinding.spec.serviceProviderSpec",
    ]);
  });

  it("writes the CEL rules of the markers where they belong", () => {
    const rules = (key: BindKindKey, path?: string) =>
      ((path ? nodeAt(schemaOf(key), path) : schemaOf(key))["x-kubernetes-validations"] ?? []).map(
        (r) => r.rule,
      );
    assert.deepEqual(rules("clusterBinding"), ['self.metadata.name == "cluster"']);
    assert.deepEqual(rules("apiServiceExport"), [
      'self.metadata.name == self.spec.names.plural+"."+self.spec.group',
    ]);
    assert.equal(rules("apiServiceExport", "spec").length, 3);
    for (const [key, path] of [
      ["apiServiceBinding", "spec.kubeconfigSecretRef"],
      ["clusterBinding", "spec.kubeconfigSecretRef"],
      ["apiServiceExport", "spec.informerScope"],
      ["apiServiceExportRequest", "spec.resources"],
      ["apiServiceExportRequest", "spec.parameters"],
    ] as const) {
      assert.deepEqual(rules(key, path), ["self == oldSelf"], `${key} ${path} immutable`);
    }
    for (const [key, path] of [
      ["apiServiceExportTemplate", "spec.permissionClaims[]"],
      ["apiServiceBinding", "spec.permissionClaims[]"],
      ["apiServiceExport", "spec.permissionClaims[]"],
      ["apiServiceExportRequest", "spec.resources[].permissionClaims[]"],
    ] as const) {
      assert.match(rules(key, path)[0] ?? "", /autoDonate.*autoAdopt/, `${key} ${path}`);
    }
  });

  describe("sample objects", () => {
    for (const sample of validSamples()) {
      it(`accepts ${sample.title}`, () => {
        assert.deepEqual(validateAgainstSchema(schemaOf(sample.kind), sample.object), []);
      });
    }

    for (const sample of invalidSamplesOf("v1.5.0").filter((s) => s.by === "schema")) {
      it(`refuses ${sample.title}, naming ${sample.field}`, () => {
        const violations = validateAgainstSchema(schemaOf(sample.kind), sample.object);
        assert.ok(violations.length > 0, "accepted");
        assert.ok(
          violations.some((v) => v.path === sample.field),
          `expected ${sample.field}, got ${JSON.stringify(violations)}`,
        );
      });
    }

    it("the seed template really is the seed's (servicebindings claiming secrets and configmaps)", () => {
      const seed = seedServiceBindingsTemplate();
      assert.equal(seed.apiVersion, "example-backend.klutch.anynines.com/v1alpha1");
      assert.deepEqual(seed.spec.APIServiceSelector, { resource: "servicebindings", group: "anynines.com" });
      assert.deepEqual(
        seed.spec.permissionClaims.map((c: any) => c.resource),
        ["secrets", "configmaps"],
      );
    });
  });
});

describe("the test's schema validator", () => {
  const schema: Schema = {
    type: "object",
    required: ["name"],
    properties: {
      name: { type: "string", minLength: 2, pattern: "^[a-z]+$" },
      size: { type: "integer", format: "int32", minimum: 1, maximum: 10 },
      mode: { type: "string", enum: ["a", "b"] },
      at: { type: "string", format: "date-time" },
      tags: { type: "array", minItems: 1, items: { type: "string" } },
      labels: { type: "object", additionalProperties: { type: "string" } },
      raw: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
      port: { anyOf: [{ type: "integer" }, { type: "string" }], "x-kubernetes-int-or-string": true },
      ports: {
        type: "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["port"],
        items: { type: "object", required: ["port"], properties: { port: { type: "integer" } } },
      },
    },
  };
  const paths = (value: unknown) => validateAgainstSchema(schema, value).map((v) => v.path);

  it("accepts a valid object, keeping preserved fields", () => {
    assert.deepEqual(
      paths({
        name: "ok",
        size: 3,
        mode: "a",
        at: "2026-01-02T03:04:05Z",
        tags: ["x"],
        labels: { a: "b" },
        raw: { anything: [1, { deep: true }] },
        port: "http",
        ports: [{ port: 1 }, { port: 2 }],
      }),
      [],
    );
  });

  it("names each offending field", () => {
    assert.deepEqual(paths({}), ["name"]);
    assert.deepEqual(paths({ name: "x1" }), ["name"]);
    assert.deepEqual(paths({ name: "ok", size: 11 }), ["size"]);
    assert.deepEqual(paths({ name: "ok", size: 1.5 }), ["size"]);
    assert.deepEqual(paths({ name: "ok", mode: "c" }), ["mode"]);
    assert.deepEqual(paths({ name: "ok", at: "yesterday" }), ["at"]);
    assert.deepEqual(paths({ name: "ok", tags: [] }), ["tags"]);
    assert.deepEqual(paths({ name: "ok", tags: [1] }), ["tags[0]"]);
    assert.deepEqual(paths({ name: "ok", labels: { a: 1 } }), ["labels.a"]);
    assert.deepEqual(paths({ name: "ok", port: true }), ["port"]);
    assert.deepEqual(paths({ name: "ok", extra: 1 }), ["extra"]);
    assert.deepEqual(paths({ name: "ok", ports: [{ port: 1 }, { port: 1 }] }), ["ports[1]"]);
    assert.deepEqual(paths([]), [""]);
  });
});
