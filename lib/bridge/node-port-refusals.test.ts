import { strict as assert } from "node:assert";
import { HeldOutPorts, HOLD_OUT_MS, nodePortRefusedMessage, refusedNodePorts } from "./node-port-refusals";

describe("node ports refused as already allocated", () => {
  it("reads the refused ports from the API server's error, as the engine reports it", () => {
    // The text of a real refusal (seen when the leader was killed while creating a group's Service).
    const message =
      'kubernetes:core/v1:Service "np-cluster-app-2-proxy" (create): Service "np-cluster-app-2-proxy" is invalid: ' +
      "spec.ports[0].nodePort: Invalid value: 31000: provided port is already allocated, " +
      "spec.ports[2].nodePort: Invalid value: 31002: provided port is already allocated";
    assert.deepEqual(refusedNodePorts(message), [31000, 31002]);
    assert.deepEqual(
      refusedNodePorts(
        "spec.ports[0].nodePort: Invalid value: 22000: provided port is not in the valid range",
      ),
      [],
    );
  });

  it("holds a port out for 10 minutes and says whether anything new was held out", () => {
    let now = 1_000;
    const held = new HeldOutPorts(() => now);
    assert.equal(held.add("g", [31000]), true);
    assert.equal(held.add("g", [31000]), false, "the same refusal again: holding it out did not help");
    assert.deepEqual(held.of("g"), [31000]);
    assert.deepEqual(held.of("other"), []);
    now += HOLD_OUT_MS;
    assert.deepEqual(held.of("g"), [], "the repair loop has freed a leaked port by then");
    assert.equal(held.add("g", [31000]), true);
  });

  it("names the ports, the likely causes and what the bridge does", () => {
    assert.match(
      nodePortRefusedMessage("cluster-app-2/proxy", [31000], [31000]),
      /refused node port 31000 of group cluster-app-2\/proxy as already allocated .*leaked.*built again at once without it$/,
    );
  });
});
