import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { bridgeStackEnv, bridgeStatePaths } from "./state-dir";

describe("bridge: its state dir and the Pulumi environment of its stacks", () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-bridge-state-"))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  const base = { PATH: "/usr/bin" } as NodeJS.ProcessEnv;

  it("as the bridge runs: makes the file backend and one private passphrase, reused afterwards", () => {
    const env = bridgeStackEnv({ base, stateDir: dir, create: true });
    const paths = bridgeStatePaths(dir);
    assert.equal(env.PULUMI_BACKEND_URL, paths.backend);
    assert.ok(fs.statSync(path.join(dir, "state")).isDirectory());
    assert.equal(env.PULUMI_CONFIG_PASSPHRASE_FILE, paths.passphrase);
    assert.equal(fs.statSync(paths.passphrase).mode & 0o777, 0o600);
    const first = fs.readFileSync(paths.passphrase, "utf8");
    assert.equal(Buffer.from(first, "base64").length, 32);
    bridgeStackEnv({ base, stateDir: dir, create: true });
    assert.equal(fs.readFileSync(paths.passphrase, "utf8"), first, "kept, or the stacks' secrets are lost");
    assert.equal(env.PATH, "/usr/bin");
  });

  it("as a preview reads: creates nothing, and uses the bridge's passphrase once there is one", () => {
    const before = bridgeStackEnv({ base, stateDir: dir, create: false, throwawayPassphrase: "t" });
    assert.deepEqual(fs.readdirSync(dir), []);
    assert.equal(before.PULUMI_CONFIG_PASSPHRASE, "t");
    assert.equal(before.PULUMI_CONFIG_PASSPHRASE_FILE, undefined);
    bridgeStackEnv({ base, stateDir: dir, create: true });
    const after = bridgeStackEnv({ base, stateDir: dir, create: false, throwawayPassphrase: "t" });
    assert.equal(after.PULUMI_CONFIG_PASSPHRASE_FILE, bridgeStatePaths(dir).passphrase);
    assert.equal(after.PULUMI_CONFIG_PASSPHRASE, undefined);
  });

  it("a passphrase or backend given is used as given, and no file is made for it", () => {
    const env = bridgeStackEnv({
      base: { ...base, PULUMI_CONFIG_PASSPHRASE_FILE: "/run/secrets/p" },
      stateDir: dir,
      backend: "s3://bucket/bridge",
      create: true,
    });
    assert.equal(env.PULUMI_BACKEND_URL, "s3://bucket/bridge");
    assert.equal(env.PULUMI_CONFIG_PASSPHRASE_FILE, "/run/secrets/p");
    assert.deepEqual(fs.readdirSync(dir), []);
  });
});
