import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as vm from "node:vm";
import * as pulumi from "@pulumi/pulumi";
import {
  assertWireguardKey,
  generateWireguardKeyPair,
  keyProblem,
  keysMatch,
  publicKeyFromPrivate,
} from "./keys";
import { WireguardKeyPair, wireguardKeyProvider as provider } from "../key-provider";
import { mockPulumi, settle } from "../../../test/helpers/mocks";

const WG = "/usr/bin/wg";

/** What the real wireguard-tools print for a private key. */
function wgPubkey(privateKey: string): string {
  return execFileSync(WG, ["pubkey"], { input: `${privateKey}\n` })
    .toString()
    .trim();
}

describe("WireGuard keys (pure)", () => {
  it("derives the same public keys as the real `wg pubkey`", () => {
    const keys = [
      // from `wg genkey` itself
      ...Array.from({ length: 3 }, () => execFileSync(WG, ["genkey"]).toString().trim()),
      // from our generator
      generateWireguardKeyPair().privateKey,
      generateWireguardKeyPair().privateKey,
      // raw random bytes, not clamped: both sides must clamp the same way
      randomBytes(32).toString("base64"),
      randomBytes(32).toString("base64"),
      // edge values
      Buffer.alloc(32, 0xff).toString("base64"),
      Buffer.alloc(32, 0x01).toString("base64"),
    ];
    for (const key of keys) {
      assert.equal(publicKeyFromPrivate(key), wgPubkey(key), `public key of ${key}`);
    }
  });

  it("generates pairs in wg's format whose halves match", () => {
    for (let i = 0; i < 5; i++) {
      const pair = generateWireguardKeyPair();
      assert.equal(keyProblem(pair.privateKey), undefined);
      assert.equal(keyProblem(pair.publicKey), undefined);
      assert.equal(pair.publicKey, wgPubkey(pair.privateKey));
      assert.ok(keysMatch(pair));
    }
    const a = generateWireguardKeyPair();
    const b = generateWireguardKeyPair();
    assert.notEqual(a.privateKey, b.privateKey);
    assert.ok(!keysMatch({ privateKey: a.privateKey, publicKey: b.publicKey }));
  });

  it("rejects malformed keys with an error naming the field", () => {
    assert.match(keyProblem("") ?? "", /missing/);
    assert.match(keyProblem(undefined) ?? "", /missing/);
    assert.match(keyProblem("abc=") ?? "", /32 bytes/);
    assert.match(keyProblem(randomBytes(31).toString("base64")) ?? "", /32 bytes/);
    assert.match(keyProblem(randomBytes(33).toString("base64")) ?? "", /32 bytes/);
    // base64url is not what wg reads
    assert.ok(keyProblem(Buffer.alloc(32, 0xfb).toString("base64url") + "=") !== undefined);
    assert.throws(
      () => assertWireguardKey("nope", "gateway privateKey"),
      /^Error: gateway privateKey is not a base64/,
    );
    assert.throws(
      () => publicKeyFromPrivate("nope", "clients.app-1.privateKey"),
      /clients\.app-1\.privateKey/,
    );
  });
});

describe("WireguardKeyPair dynamic provider", () => {
  it("check defaults rotation and rejects a bad one", async () => {
    assert.deepEqual(await provider.check({ rotation: "x" }, { rotation: undefined as unknown as string }), {
      inputs: { rotation: "initial" },
    });
    assert.deepEqual(await provider.check({ rotation: "x" }, { rotation: "2025-01" }), {
      inputs: { rotation: "2025-01" },
    });
    const bad = await provider.check({ rotation: "x" }, { rotation: 7 as unknown as string });
    assert.equal(bad.failures?.[0]?.property, "rotation");
    assert.match(bad.failures?.[0]?.reason ?? "", /non-empty string/);
  });

  it("create makes a matching pair; the id is the public key", async () => {
    const created = await provider.create({ rotation: "initial" });
    const outs = created.outs!;
    assert.equal(created.id, outs.publicKey);
    assert.equal(outs.rotation, "initial");
    assert.equal(outs.publicKey, wgPubkey(outs.privateKey));
    const again = await provider.create({ rotation: "initial" });
    assert.notEqual(again.outs!.privateKey, outs.privateKey, "every create is a fresh pair");
  });

  it("diff: no change while rotation stays, replace when it changes", async () => {
    const { id, outs } = await provider.create({ rotation: "initial" });
    assert.deepEqual(await provider.diff(id, outs!, { rotation: "initial" }), { changes: false });
    const rotated = await provider.diff(id, outs!, { rotation: "2025-q3" });
    assert.equal(rotated.changes, true);
    assert.deepEqual(rotated.replaces, ["rotation"]);
    assert.equal(rotated.deleteBeforeReplace, false);
  });

  it("update keeps the pair; read re-derives the public key; delete is a no-op", async () => {
    const { id, outs } = await provider.create({ rotation: "a" });
    const updated = await provider.update(id, outs!, { rotation: "b" });
    assert.deepEqual(updated.outs, { ...outs, rotation: "b" });
    const read = await provider.read(id, { ...outs!, publicKey: "stale" });
    assert.equal(read.id, id);
    assert.equal(read.props?.publicKey, outs!.publicKey);
    assert.equal(read.props?.privateKey, outs!.privateKey);
    await provider.delete(id, outs!);
  });

  it("serializes self-contained: the serialized provider runs without this project's modules", async function () {
    this.timeout(30000);
    const serialized = await pulumi.runtime.serializeFunction(() => provider, { allowSecrets: true });
    assert.doesNotMatch(serialized.text, /lib\/network|@pulumi\/pulumi/);
    assert.ok(serialized.text.length < 20000, `serialized provider is ${serialized.text.length} characters`);
    const mod: { exports: { handler?: () => typeof provider } } = { exports: {} };
    // Only node built-ins are on offer, like in the dynamic provider host.
    const onlyBuiltins = (id: string) => {
      if (!id.startsWith("node:")) throw new Error(`serialized provider required ${id}`);
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      return require(id);
    };
    // A fresh context: no module scope of this project, only what the provider host offers.
    vm.runInNewContext(serialized.text, { module: mod, exports: mod.exports, require: onlyBuiltins, Buffer });
    const revived = mod.exports.handler!();
    const { outs } = await revived.create({ rotation: "initial" });
    assert.equal(outs!.publicKey, wgPubkey(outs!.privateKey));
    // objects from the other context have its prototypes; compare their JSON
    assert.equal(
      JSON.stringify(await revived.diff("id", outs!, { rotation: "initial" })),
      '{"changes":false}',
    );
  });

  it("the resource asks the engine to store privateKey as a secret and sends no key material", async function () {
    this.timeout(30000);
    const run = mockPulumi({});
    // The registration request is where additionalSecretOutputs travels; the mocks do not see it.
    const monitor = pulumi.runtime.getMonitor() as unknown as {
      registerResource(
        req: { getType(): string; getAdditionalsecretoutputsList(): string[] },
        cb: unknown,
      ): void;
    };
    const register = monitor.registerResource.bind(monitor);
    const secretOutputs = new Map<string, string[]>();
    monitor.registerResource = (req, cb) => {
      secretOutputs.set(req.getType(), req.getAdditionalsecretoutputsList());
      register(req, cb);
    };
    const pair = new WireguardKeyPair("gw", { rotation: "r1" });
    await new Promise((resolve) => pair.urn.apply(resolve));
    await settle();
    assert.deepEqual(secretOutputs.get("pulumi-nodejs:dynamic/klutch:WireguardKeyPair"), ["privateKey"]);
    const [registered] = run.ofType("pulumi-nodejs:dynamic/klutch:WireguardKeyPair");
    assert.equal(registered?.inputs.rotation, "r1");
    assert.equal(registered?.inputs.privateKey, undefined);
    assert.equal(typeof registered?.inputs.__provider, "string");
  });
});
