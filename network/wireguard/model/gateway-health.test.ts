import { strict as assert } from "node:assert";
import { networkPath } from "../../../test/helpers/network-path";
import { gatewayFlowsName, gatewayOfFlows } from "./render-k8s";
import { gatewaySelector, judgeGateway, podServes, type GatewayPodLike } from "./gateway-health";

const pod = (name: string, ready: boolean, deleting = false): GatewayPodLike => ({
  metadata: { name, ...(deleting ? { deletionTimestamp: "2026-12-05T11:00:00Z" } : {}) },
  status: { conditions: [{ type: "Ready", status: ready ? "True" : "False" }] },
});
const GATEWAY = { namespace: "klutch-network", name: "wg-gateway" };
const paths = [networkPath("a"), networkPath("b")];

describe("WireGuard: whether the gateway serves a group's paths (pure)", () => {
  it("selects the tunnel's gateway pods by the labels render-k8s gives them, the tunnel read back from its flows ConfigMap's name", () => {
    assert.deepEqual(gatewayOfFlows(gatewayFlowsName("wg")), { tunnel: "wg", gateway: "wg-gateway" });
    assert.equal(gatewayOfFlows("some-other-configmap"), undefined);
    assert.equal(
      gatewaySelector("wg"),
      "app.kubernetes.io/name=klutch-wireguard,app.kubernetes.io/instance=wg,app.kubernetes.io/component=gateway",
    );
  });

  it("a pod serves when it is Ready and not being deleted", () => {
    assert.equal(podServes(pod("g", true)), true);
    assert.equal(podServes(pod("g", false)), false);
    assert.equal(podServes(pod("g", true, true)), false, "terminating");
    assert.equal(podServes({ metadata: { name: "g" } }), false, "no conditions yet");
  });

  it("every path is usable as far as the gateway goes while one pod serves, and none while none does, naming the pods or their absence", () => {
    const serving = judgeGateway(GATEWAY, [pod("g-1", false), pod("g-2", true)], paths);
    assert.deepEqual(Object.keys(serving), ["a", "b"]);
    assert.equal(serving.a!.ready, true);
    const down = judgeGateway(GATEWAY, [pod("g-1", false), pod("g-2", true, true)], paths);
    assert.deepEqual(
      Object.values(down).map((h) => [h.ready, h.reason]),
      [
        [false, "GatewayUnavailable"],
        [false, "GatewayUnavailable"],
      ],
    );
    assert.match(
      down.a!.message,
      /^no pod of the WireGuard gateway klutch-network\/wg-gateway is Ready \(g-1, g-2:/,
    );
    assert.match(
      judgeGateway(GATEWAY, [], paths).b!.message,
      /wg-gateway has no pod, so no connection through the tunnel/,
    );
    assert.deepEqual(judgeGateway(GATEWAY, [], []), {});
  });
});
