import { strict as assert } from "node:assert";
import { forwarderProblems, realisedOnly } from "./forwarder-problems";

describe("local WireGuard forwarders: one failure is one path's problem", () => {
  it("keeps the endpoints of the forwarders that listen and reports the one that does not", () => {
    const ok = { hostForConsumer: "127.0.0.1", port: 5432 };
    assert.deepEqual(realisedOnly({ "ns/a": ok, "ns/b": undefined }), { "ns/a": ok });
    assert.deepEqual(forwarderProblems({ "ns/a": undefined, "ns/b": "port 5433 is held: stop it" }), {
      "ns/b": { reason: "ForwarderFailed", message: "port 5433 is held: stop it" },
    });
  });
});
