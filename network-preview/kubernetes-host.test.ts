import { strict as assert } from "node:assert";
import type { NetworkPathObject } from "../lib/bridge/model";
import type { Target } from "../network/proxy/bridge-program";
import { clusterTarget } from "../network/wireguard/fixtures";
import { assemble, type GroupPlan } from "./connections";

/** The host a previewed proxy group's new connection shows: what the bridge will report. */
const orders: NetworkPathObject = {
  metadata: { name: "orders", generation: 1 },
  spec: {
    implementation: "proxy",
    connection: "xr-orders",
    consumerNamespace: "team-p",
    instanceHost: "10.96.12.7",
    port: 5432,
  },
};
const group: GroupPlan = {
  key: "team-p/proxy",
  before: [],
  after: [orders],
  added: [],
  deletedIds: new Set(),
};
const hostOf = (target: Target) => assemble(group, [], target, "proxy").connections[0]?.after;

describe("network preview: a kubernetes-target proxy's host", () => {
  it("ClusterIP: the Service's DNS name", () => {
    assert.match(
      JSON.stringify(hostOf(clusterTarget())),
      /np-team-p-proxy\.klutch-network\.svc\.cluster\.local/,
    );
  });

  it("NodePort: the --node-host given, else unknown (the bridge picks a Ready node on each run)", () => {
    const nodePort = {
      ...(clusterTarget() as Extract<Target, { kind: "kubernetes" }>),
      serviceType: "NodePort",
    };
    assert.match(JSON.stringify(hostOf({ ...nodePort, nodeHost: "192.0.2.20" })), /"host":"192\.0\.2\.20"/);
    assert.match(JSON.stringify(hostOf(nodePort)), /"host":"unknown"/);
  });
});
