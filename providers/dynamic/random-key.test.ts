import { strict as assert } from "node:assert";
import { randomKeyProvider, type RandomKeyInputs, type RandomKeyOutputs } from "./random-key";

const inputs: RandomKeyInputs = { length: 32, encoding: "base64", rotation: "initial" };

async function create(i: RandomKeyInputs): Promise<{ id: string; outs: RandomKeyOutputs }> {
  const r = await randomKeyProvider.create(i);
  assert.ok(r.outs, "create returns outputs");
  return { id: r.id, outs: r.outs };
}

describe("RandomKey provider", () => {
  it("check fills defaults and rejects bad lengths, encodings and rotations, naming each", async () => {
    const ok = await randomKeyProvider.check({} as RandomKeyInputs, { length: 16 } as RandomKeyInputs);
    assert.deepEqual(ok.inputs, { length: 16, encoding: "base64", rotation: "initial" });
    const bad = await randomKeyProvider.check(
      {} as RandomKeyInputs,
      {
        length: 8,
        encoding: "rot13",
        rotation: "",
      } as unknown as RandomKeyInputs,
    );
    assert.deepEqual(
      bad.failures?.map((f) => f.property),
      ["length", "encoding", "rotation"],
    );
  });

  it("create makes keys of the requested size from a random source, with an id unrelated to the key", async () => {
    const a = await create(inputs);
    const b = await create(inputs);
    assert.equal(Buffer.from(a.outs.value, "base64").length, 32);
    assert.notEqual(a.outs.value, b.outs.value);
    assert.ok(!a.id.includes(a.outs.value) && !a.outs.value.includes(a.id));
    const hex = await create({ ...inputs, length: 24, encoding: "hex" });
    assert.match(hex.outs.value, /^[0-9a-f]{48}$/);
  });

  it("diff: no change keeps the key; length, encoding or rotation replace it", async () => {
    const { outs } = await create(inputs);
    assert.deepEqual(await randomKeyProvider.diff("id", outs, inputs), { changes: false });
    const rotated = await randomKeyProvider.diff("id", outs, { ...inputs, rotation: "2026-11" });
    assert.deepEqual(rotated, { changes: true, replaces: ["rotation"], deleteBeforeReplace: false });
    const longer = await randomKeyProvider.diff("id", outs, { ...inputs, length: 64 });
    assert.deepEqual(longer.replaces, ["length"]);
  });

  it("update keeps the value; delete has nothing outside state to remove", async () => {
    const { outs } = await create(inputs);
    const updated = await randomKeyProvider.update("id", outs, inputs);
    assert.equal(updated.outs?.value, outs.value);
    await randomKeyProvider.delete("id", outs);
  });

  it("runs serialized in plain node without this project's modules", async () => {
    // The engine runs the provider from its serialized closure: it must not need ts-node.
    const { execFileSync } = await import("node:child_process");
    const source = `const p = (${randomKeyProvider.create.toString().replace(/^create/, "function")});
      p({ length: 32, encoding: "base64", rotation: "x" }).then((r) => process.stdout.write(r.outs.value));`;
    const out = execFileSync(process.execPath, ["-e", source]).toString();
    assert.equal(Buffer.from(out, "base64").length, 32);
  });
});
