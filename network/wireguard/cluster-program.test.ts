import { strict as assert } from "node:assert";
import { resolveIpv4 } from "./cluster-program";

describe("WireGuard cluster program's resolver (the system's, as the bridge pod has it)", () => {
  it("resolves a name by the system's resolver to its IPv4 address (localhost: /etc/hosts, no query leaves the machine)", async () => {
    assert.deepEqual(await resolveIpv4("localhost"), { address: "127.0.0.1" });
  });
});
