import * as assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { setFileEnv } from "./file-env";

describe("setFileEnv", () => {
  const key = "KLUTCH_FILE_ENV_TEST";
  afterEach(() => delete process.env[key]);

  it("sets the variables and puts back what was there, removing what was not", () => {
    process.env[key] = "before";
    const restore = setFileEnv({ [key]: "mine", [`${key}_NEW`]: "new" });
    assert.equal(process.env[key], "mine");
    restore();
    assert.equal(process.env[key], "before");
    assert.equal(process.env[`${key}_NEW`], undefined);
  });

  it("a late restore leaves alone a variable the next file has set since", () => {
    const restoreFirst = setFileEnv({ [key]: "first" });
    const restoreNext = setFileEnv({ [key]: "next" });
    restoreFirst();
    assert.equal(process.env[key], "next");
    restoreNext();
    assert.equal(process.env[key], "first", "the next file puts back what it found");
  });

  it("a child spawned after a restore sees what a later file sets (process.env is never replaced)", () => {
    setFileEnv({ [key]: "first" })();
    const restore = setFileEnv({ [key]: "later" });
    const child = spawnSync(process.execPath, ["-e", `process.stdout.write(process.env.${key} ?? "")`], {
      encoding: "utf8",
    });
    restore();
    assert.equal(child.stdout, "later");
  });
});
