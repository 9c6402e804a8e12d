import { strict as assert } from "node:assert";
import * as pulumi from "@pulumi/pulumi";
import { withClientReasons } from "./client-reasons";

/** What @kubernetes/client-node 2.x rejects with when a request gets no answer. */
function fetchFailed(): Error {
  return new TypeError("fetch failed", { cause: new Error("connect ECONNREFUSED 127.0.0.1:6443") });
}

describe("withClientReasons", () => {
  it("says why a request got no answer in the message the engine shows, on the same error", async () => {
    const failure = Object.assign(fetchFailed(), { id: "made-but-not-ready" });
    const provider = withClientReasons<pulumi.dynamic.ResourceProvider>({
      create: () => Promise.reject(failure),
    });
    await assert.rejects(provider.create({}), (err: Error & { id?: string }) => {
      assert.equal(err, failure);
      assert.equal(err.message, "fetch failed: connect ECONNREFUSED 127.0.0.1:6443");
      assert.equal(err.id, "made-but-not-ready");
      return true;
    });
  });

  it("leaves other failures and every result as they were", async () => {
    const provider = withClientReasons<pulumi.dynamic.ResourceProvider>({
      create: () => Promise.resolve({ id: "made" }),
      diff: () => Promise.resolve({ changes: true }),
      delete: () => Promise.reject(new Error("HTTP-Code: 403")),
    });
    assert.deepEqual(await provider.create({}), { id: "made" });
    assert.deepEqual(await provider.diff!("id", {}, {}), { changes: true });
    await assert.rejects(provider.delete!("id", {}), /^Error: HTTP-Code: 403$/);
  });

  it("is serialized with the provider it wraps, as the engine's host loads it", async () => {
    const provider = withClientReasons<pulumi.dynamic.ResourceProvider>({
      create: () => Promise.reject(fetchFailed()),
    });
    const { text, exportName } = await pulumi.runtime.serializeFunction(() => provider, {
      allowSecrets: true,
    });
    const module = { exports: {} as Record<string, () => pulumi.dynamic.ResourceProvider> };
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the serialized module, as the host runs it
    new Function("exports", "require", "module", text)(module.exports, require, module);
    const loaded = module.exports[exportName]!();
    await assert.rejects(
      loaded.create({}),
      /^TypeError: fetch failed: connect ECONNREFUSED 127\.0\.0\.1:6443$/,
    );
  });
});
