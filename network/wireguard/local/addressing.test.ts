import { strict as assert } from "node:assert";
import { clientTunnelAddresses, linkAddresses, linkSlots } from "./addressing";

describe("local WireGuard addressing", () => {
  it("hands out the hosts of the tunnel CIDR but its network, gateway and broadcast addresses", () => {
    assert.deepEqual(clientTunnelAddresses("100.96.0.1/29"), [
      "100.96.0.2",
      "100.96.0.3",
      "100.96.0.4",
      "100.96.0.5",
      "100.96.0.6",
    ]);
    assert.equal(clientTunnelAddresses("100.96.0.0/24").length, 253);
  });

  it("gives each link slot its own /30: the gateway's end first, the client's second", () => {
    assert.deepEqual(linkSlots("10.250.0.0", 3), ["10.250.0.0+0", "10.250.0.0+1", "10.250.0.0+2"]);
    assert.deepEqual(linkAddresses("10.250.0.0+0", "10.250.0.0"), {
      gateway: "10.250.0.1",
      client: "10.250.0.2",
    });
    assert.deepEqual(linkAddresses("10.250.0.0+64", "10.250.0.0"), {
      gateway: "10.250.1.1",
      client: "10.250.1.2",
    });
  });
});
