import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { INTERNAL_RESOURCES, internalKind } from "./internal-resources";
import { KlutchProvider } from "./provider";
import { RandomKey } from "../../providers/dynamic/random-key";
import { dynamicType, internalType, setResourceServing } from "../../providers/dynamic/klutch-resource";
import { SECRET_MARKER, SECRET_SIG } from "../../lib/pulumi-secret";
import { mockPulumi } from "../../test/helpers/mocks";

const ROOT = path.resolve(__dirname, "..", "..");
const secret = (value: unknown) => ({ [SECRET_SIG]: SECRET_MARKER, value });
const urnOf = (kind: string) =>
  `urn:pulumi:dev::klutch::klutch:index:Environment$${internalType(kind)}::env-key`;

/** Every `KlutchResource` kind declared in the sources: `super(provider, name, props, opts, "klutch", "<Kind>")`. */
function declaredKinds(): string[] {
  const kinds: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (!["node_modules", "test", ".git", ".klutch", "sdk"].includes(e.name)) walk(p);
      } else if (e.name.endsWith(".ts") && !e.name.endsWith(".test.ts")) {
        const text = fs.readFileSync(p, "utf8");
        if (!/extends KlutchResource\b/.test(text)) continue;
        for (const m of text.matchAll(/"klutch",\s*"(\w+)",?\s*\)/g)) kinds.push(m[1]!);
      }
    }
  };
  walk(ROOT);
  return kinds.sort();
}

describe("the plugin serves its components' resources itself (programs/klutch-provider/internal-resources.ts)", () => {
  const provider = new KlutchProvider();

  it("serves every KlutchResource kind of the sources, and only those", () => {
    const declared = declaredKinds();
    assert.ok(declared.length >= 12, `found ${declared.join(", ")}`);
    assert.deepEqual(Object.keys(INTERNAL_RESOURCES).sort(), declared);
  });

  it("reads the kind from a URN whose type is nested under a component", () => {
    assert.equal(internalKind(urnOf("RandomKey")), "RandomKey");
    assert.equal(internalKind("urn:pulumi:dev::p::klutch:internal:PortAllocation::a"), "PortAllocation");
    assert.equal(internalKind("urn:pulumi:dev::p::kubernetes:core/v1:Secret::a"), undefined);
  });

  it("runs a RandomKey's check, create, diff, update and delete as the dynamic host would, secrets kept secret", async () => {
    const urn = urnOf("RandomKey");
    const checked = await provider.check(
      urn,
      {},
      { length: 32, encoding: "hex", rotation: secret("2026-11") },
    );
    assert.deepEqual(checked.failures ?? [], []);
    // The secret input comes back in its wire form: the engine stores checked inputs as given.
    assert.deepEqual(checked.inputs, { length: 32, encoding: "hex", rotation: secret("2026-11") });

    const created = await provider.create(urn, checked.inputs);
    const outs = created.outs as Record<string, unknown>;
    assert.match(String(outs.value), /^[0-9a-f]{64}$/);
    assert.deepEqual(outs.rotation, secret("2026-11"));

    const same = await provider.diff(created.id, urn, outs, checked.inputs);
    assert.equal(same.changes, false);
    const rotated = await provider.diff(created.id, urn, outs, { ...checked.inputs, rotation: "2026-12" });
    assert.equal(rotated.changes, true);
    assert.deepEqual(rotated.replaces, ["rotation"]);

    // An old state made by the dynamic resource carries its serialized provider: ignored.
    const aliased = await provider.diff(
      created.id,
      urn,
      { ...outs, __provider: "exports.handler = 1" },
      checked.inputs,
    );
    assert.equal(aliased.changes, false);
    const updated = await provider.update(created.id, urn, { ...outs, __provider: "x" }, checked.inputs);
    assert.equal((updated.outs as Record<string, unknown>).value, outs.value);
    assert.equal("__provider" in (updated.outs as object), false);
    await provider.delete(created.id, urn, outs);
  });

  it("refuses a kind it does not serve, naming the ones it does", async () => {
    await assert.rejects(
      provider.create("urn:pulumi:dev::p::klutch:internal:Nope::n", {}),
      /unknown resource type .*klutch:internal:Nope.*klutch:internal:RandomKey/,
    );
  });

  describe("what a component registers", () => {
    after(() => setResourceServing("dynamic"));

    const registered = async () => {
      const run = mockPulumi({});
      const key = new RandomKey("k", { length: 16 });
      await new Promise<void>((resolve) => key.urn.apply(() => resolve()));
      const [r] = run.resources;
      assert.ok(r);
      return r;
    };

    it("in a program: the dynamic resource it always was, its provider serialized into the state", async () => {
      setResourceServing("dynamic");
      const r = await registered();
      assert.equal(r.type, dynamicType("RandomKey"));
      assert.equal(r.type, "pulumi-nodejs:dynamic/klutch:RandomKey");
      assert.equal(typeof r.inputs.__provider, "string");
      assert.match(r.inputs.__provider as string, /exports\.handler/);
    });

    it("in the plugin: klutch:internal:<Kind>, no code in the state", async () => {
      setResourceServing("plugin");
      const r = await registered();
      assert.equal(r.type, "klutch:internal:RandomKey");
      assert.equal("__provider" in r.inputs, false);
      assert.equal(r.inputs.length, 16);
    });
  });
});
