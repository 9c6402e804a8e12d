import { strict as assert } from "node:assert";
import { FieldPathError, formatFieldPath, getFieldPath, parseFieldPath, setFieldPath } from "./field-path.js";

describe("composition function: field paths", () => {
  describe("parseFieldPath", () => {
    it("splits fields at dots", () => {
      assert.deepEqual(parseFieldPath("metadata.name"), [
        { kind: "field", name: "metadata" },
        { kind: "field", name: "name" },
      ]);
      assert.deepEqual(parseFieldPath("apiVersion"), [{ kind: "field", name: "apiVersion" }]);
    });

    it("keeps dots and slashes inside brackets as part of the key", () => {
      assert.deepEqual(parseFieldPath("metadata.labels[crossplane.io/claim-namespace]"), [
        { kind: "field", name: "metadata" },
        { kind: "field", name: "labels" },
        { kind: "field", name: "crossplane.io/claim-namespace" },
      ]);
    });

    it("takes quoted keys in brackets, double or single quotes, as keys even when they are digits", () => {
      assert.deepEqual(parseFieldPath('metadata.annotations["a.b/c"]')[2], { kind: "field", name: "a.b/c" });
      assert.deepEqual(parseFieldPath("metadata.annotations['a.b/c']")[2], { kind: "field", name: "a.b/c" });
      assert.deepEqual(parseFieldPath('data["0"]')[1], { kind: "field", name: "0" });
    });

    it("reads a bracketed number as an array index, one too large for 32 bits as a key", () => {
      assert.deepEqual(parseFieldPath("spec.items[0].name"), [
        { kind: "field", name: "spec" },
        { kind: "field", name: "items" },
        { kind: "index", index: 0 },
        { kind: "field", name: "name" },
      ]);
      assert.deepEqual(parseFieldPath("spec.items[0][8]").slice(2), [
        { kind: "index", index: 0 },
        { kind: "index", index: 8 },
      ]);
      assert.deepEqual(parseFieldPath("a[4294967296]")[1], { kind: "field", name: "4294967296" });
      assert.deepEqual(parseFieldPath("[42]"), [{ kind: "index", index: 42 }]);
    });

    const malformed: [string, RegExp][] = [
      ["", /empty/],
      [".metadata.name", /unexpected "\." at position 0/],
      ["metadata..name", /unexpected "\." at position 9/],
      ["metadata.name.", /unexpected "\." at position 13/],
      ["spec.containers[]", /empty brackets/],
      ["spec.containers.[0].name", /unexpected "\[" after "\."/],
      ["spec.containers[0", /unterminated "\["/],
      ["spec.containers]", /unexpected "\]"/],
      ["spec[a[b]]", /unexpected "\["/],
      ["spec[a]b", /unexpected "b" after "\]"/],
      ['spec["a]', /unbalanced quote/],
      ['spec[""]', /empty quoted key/],
      ["spec.*.name", /wildcards/],
      ["spec[*]", /wildcards/],
    ];
    for (const [path, error] of malformed)
      it(`refuses ${JSON.stringify(path)}`, () => {
        assert.throws(
          () => parseFieldPath(path),
          (e: unknown) => e instanceof FieldPathError && error.test(e.message),
        );
      });

    it("formats segments back, bracketing keys with dots", () => {
      const path = "metadata.labels[crossplane.io/claim-namespace]";
      assert.equal(formatFieldPath(parseFieldPath(path)), path);
      assert.equal(formatFieldPath(parseFieldPath("spec.items[0].name")), "spec.items[0].name");
    });
  });

  describe("getFieldPath", () => {
    const object = {
      metadata: { name: "a", labels: { "crossplane.io/claim-namespace": "team-a" }, annotations: null },
      spec: { port: 5432, items: [{ name: "first" }, { name: "second" }], enabled: false, empty: "" },
    };

    it("reads fields, bracketed keys and indexes, falsy values included", () => {
      assert.deepEqual(getFieldPath(object, "metadata.name"), { found: true, value: "a" });
      assert.deepEqual(getFieldPath(object, "metadata.labels[crossplane.io/claim-namespace]"), {
        found: true,
        value: "team-a",
      });
      assert.deepEqual(getFieldPath(object, "spec.items[1].name"), { found: true, value: "second" });
      assert.deepEqual(getFieldPath(object, "spec.port"), { found: true, value: 5432 });
      assert.deepEqual(getFieldPath(object, "spec.enabled"), { found: true, value: false });
      assert.deepEqual(getFieldPath(object, "spec.empty"), { found: true, value: "" });
      assert.deepEqual(getFieldPath(object, "spec.items"), { found: true, value: object.spec.items });
    });

    it("finds nothing for a missing field, an index past the end, a null, or below a missing field", () => {
      for (const path of [
        "spec.missing",
        "spec.items[2].name",
        "metadata.annotations",
        "metadata.annotations[a.b/c]",
        "status.hostForConsumer",
        "metadata.labels[toString]",
      ])
        assert.deepEqual(getFieldPath(object, path), { found: false }, path);
    });

    it("refuses a path through a value of the wrong type", () => {
      assert.throws(() => getFieldPath(object, "spec.port.value"), /spec\.port: not an object/);
      assert.throws(() => getFieldPath(object, "spec[0]"), /spec: not an array/);
      assert.throws(() => getFieldPath(object, "spec.items.name"), /spec\.items: not an object/);
    });
  });

  describe("setFieldPath", () => {
    it("creates intermediate objects, and arrays for indexes", () => {
      const object: Record<string, unknown> = {};
      setFieldPath(object, "spec.consumerNamespace", "team-a");
      setFieldPath(object, "metadata.annotations[a.b/c]", "x");
      setFieldPath(object, "spec.items[1].name", "second");
      setFieldPath(object, "spec.matrix[0][2]", 7);
      assert.deepEqual(object, {
        spec: { consumerNamespace: "team-a", items: [null, { name: "second" }], matrix: [[null, null, 7]] },
        metadata: { annotations: { "a.b/c": "x" } },
      });
    });

    it("writes into what exists, replacing only the final value", () => {
      const object: Record<string, unknown> = { spec: { keep: 1, port: 1, items: [{ a: 1 }] } };
      setFieldPath(object, "spec.port", 5432);
      setFieldPath(object, "spec.items[0].b", 2);
      setFieldPath(object, "spec.items[2]", "c");
      assert.deepEqual(object, { spec: { keep: 1, port: 5432, items: [{ a: 1, b: 2 }, null, "c"] } });
    });

    it("refuses to write through a value of the wrong type, and an index at the root", () => {
      const object = { spec: { port: 5432, items: [] as unknown[] } };
      assert.throws(() => setFieldPath(object, "spec.port.value", 1), /spec\.port: not an object/);
      assert.throws(() => setFieldPath(object, "spec.items.name", 1), /spec\.items: not an object/);
      assert.throws(() => setFieldPath(object, "spec[0]", 1), /spec: not an array/);
      assert.throws(() => setFieldPath(object, "[0]", 1), /not an array/);
      assert.deepEqual(object, { spec: { port: 5432, items: [] } });
    });

    it("writes a key named __proto__ as a plain key, never as the object's prototype", () => {
      const object: Record<string, unknown> = {};
      setFieldPath(object, "metadata[__proto__].polluted", true);
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
      assert.equal(Object.getPrototypeOf(object.metadata), Object.prototype);
      assert.deepEqual(getFieldPath(object, "metadata[__proto__].polluted"), { found: true, value: true });
    });

    it("refuses a malformed path", () => {
      assert.throws(() => setFieldPath({}, "spec..port", 1), FieldPathError);
    });
  });
});
