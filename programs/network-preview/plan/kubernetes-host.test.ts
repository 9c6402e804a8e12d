import { strict as assert } from "node:assert";
import type { NetworkPathObject } from "../../../lib/bridge/model";
import type { BridgeTarget as Target } from "../../../network/contract/bridge-target";
import { clusterTarget } from "../../../test/helpers/wireguard-fixtures";
import type { NodeLike } from "../../../lib/bridge/node-host";
import { assemble } from "./assemble";
import { groupTarget } from "./group-target";
import type { BridgeLayout, GroupPlan } from "./model";

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

describe("network preview: a NodePort group's target, as the bridge builds it", () => {
  const ready = (name: string, ip: string): NodeLike => ({
    metadata: { name },
    status: {
      addresses: [{ type: "InternalIP", address: ip }],
      conditions: [{ type: "Ready", status: "True" }],
    },
  });
  const view = (nodes?: NodeLike[]): BridgeLayout => ({
    target: { ...(clusterTarget() as Extract<Target, { kind: "kubernetes" }>), serviceType: "NodePort" },
    portRange: { from: 30000, to: 30099 },
    slotSize: 50,
    bindAddress: "127.0.0.1",
    ...(nodes ? { nodes } : {}),
  });

  it("takes the node the bridge would pick from the nodes listed, and says so", () => {
    const notes: string[] = [];
    const target = groupTarget(view([ready("b", "10.0.0.2"), ready("a", "10.0.0.1")]), {}, group, notes);
    assert.equal(target.kind === "kubernetes" ? target.nodeHost : undefined, "10.0.0.1");
    assert.match(notes.join("\n"), /reports 10\.0\.0\.1, the node the bridge would pick now/);
  });

  it("without nodes listed (or none Ready), no host is made up", () => {
    for (const nodes of [undefined, []]) {
      const target = groupTarget(view(nodes), {}, group, []);
      assert.equal(target.kind === "kubernetes" ? target.nodeHost : "local", undefined);
    }
  });
});
