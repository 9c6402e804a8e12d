import { strict as assert } from "node:assert";
import type { ControlPlaneConfig } from "../../../lib/config/schema";
import { nodePortProbes, probeIssue, probeService } from "./node-port-probe";

const existing = {
  name: "cp",
  infrastructure: "existing",
  kubeconfig: { path: "cp.yaml" },
} as ControlPlaneConfig;
const local = { name: "cp", infrastructure: "local" } as ControlPlaneConfig;
const proxy = (serviceType: string, from = 5000, to = 5100) => ({
  networkConnector: { implementation: "proxy", serviceType, portRange: { from, to } },
});

describe("proxy: asking the data-service cluster about node ports (pure)", () => {
  it("asks only where the cluster's range is not known, and only of NodePort proxies", () => {
    const probes = nodePortProbes({
      controlPlane: existing,
      appClusters: [
        proxy("NodePort"),
        proxy("LoadBalancer"),
        { networkConnector: { implementation: "noop" } },
        proxy("NodePort", 31000, 31999),
      ],
    });
    assert.deepEqual(
      probes.map((p) => [p.at.join("."), p.range.from, p.range.to]),
      [
        ["appClusters.0.networkConnector.portRange", 5000, 5100],
        ["appClusters.3.networkConnector.portRange", 31000, 31999],
      ],
    );
    assert.deepEqual(nodePortProbes({ controlPlane: local, appClusters: [proxy("NodePort")] }), []);
  });

  it("the probe Service names the range's ends as node ports, under a generated name", () => {
    const [probe] = nodePortProbes({ controlPlane: existing, appClusters: [proxy("NodePort")] });
    const svc = probeService(probe!) as {
      metadata: { generateName: string };
      spec: { type: string; ports: { nodePort: number }[] };
    };
    assert.equal(svc.spec.type, "NodePort");
    assert.deepEqual(
      svc.spec.ports.map((p) => p.nodePort),
      [5000, 5100],
    );
    assert.equal(svc.metadata.generateName, "klutch-node-port-probe-");
  });

  it("the range refusal is an issue naming the field, the value and the cluster's range; any other answer is none", () => {
    const [probe] = nodePortProbes({ controlPlane: existing, appClusters: [proxy("NodePort")] });
    const issue = probeIssue(
      probe!,
      'Service "klutch-node-port-probe-x" is invalid: spec.ports[0].nodePort: Invalid value: 5000: provided port is not in the valid range. The range of valid ports is 30000-32767',
    );
    assert.equal(issue?.path, "klutch:appClusters[0].networkConnector.portRange");
    assert.match(
      issue.message,
      /^5000-5100 is outside the node ports of the data-service cluster cp: its API server takes 30000-32767 .*choose a range within 30000-32767$/,
    );
    assert.equal(
      probeIssue(probe!, "spec.ports[0].nodePort: Invalid value: 30000: provided port is already allocated"),
      undefined,
    );
  });
});
