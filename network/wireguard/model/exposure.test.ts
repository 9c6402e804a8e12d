import { strict as assert } from "node:assert";
import type { AppClusterConfig } from "../../../lib/config/schema";
import { checkWireguard } from "./checks";
import { type WireguardConnectorConfig, wireguardConnector } from "./config";
import { gatewayExposure, gatewayExposureOf } from "./exposure";

const connector = (extra: Record<string, unknown> = {}): WireguardConnectorConfig =>
  wireguardConnector.parse({ implementation: "wireguard", ...extra });

const app = (name: string, network?: AppClusterConfig["network"]) =>
  ({ name, infrastructure: "aws", ...(network ? { network } : {}) }) as AppClusterConfig;

describe("WireGuard gateway exposure (pure)", () => {
  it("admits each app cluster's allowed sources, else its egress, else its nodes; loopback when local", () => {
    assert.deepEqual(gatewayExposureOf(app("a", { nodeCidr: "10.30.0.0/16" }), connector()), {
      ok: true,
      exposure: { sourceRanges: ["10.30.0.0/16"], internal: true, public: false },
    });
    assert.deepEqual(
      gatewayExposureOf(
        app("a", { nodeCidr: "10.30.0.0/16", egressCidrs: ["198.51.100.7/32"] }),
        connector({ allowedSources: ["203.0.113.0/28"] }),
      ),
      { ok: true, exposure: { sourceRanges: ["203.0.113.0/28"], internal: false, public: false } },
    );
    assert.deepEqual(gatewayExposureOf({ infrastructure: "local" }, connector()), {
      ok: true,
      exposure: { sourceRanges: ["127.0.0.0/8"], internal: true, public: false },
    });
  });

  it("the shared gateway admits every app cluster's sources, once each; internal only if all are private", () => {
    const both = gatewayExposure([
      {
        app: app("a", { nodeCidr: "10.20.0.0/16", egressCidrs: ["198.51.100.7/32"] }),
        connector: connector(),
      },
      { app: app("b", { nodeCidr: "10.30.0.0/16" }), connector: connector() },
      { app: app("c", { nodeCidr: "10.30.0.0/16" }), connector: connector() },
    ]);
    assert.deepEqual(both, {
      sourceRanges: ["198.51.100.7/32", "10.30.0.0/16"],
      internal: false,
      public: false,
    });
    const open = gatewayExposure([
      { app: app("a", { nodeCidr: "10.20.0.0/16" }), connector: connector({ publicEndpoint: true }) },
    ]);
    assert.deepEqual(open, { sourceRanges: ["0.0.0.0/0"], internal: false, public: true });
    assert.throws(
      () => gatewayExposure([{ app: app("x"), connector: connector() }]),
      /internal: app cluster x: a LoadBalancer WireGuard gateway needs to know who may connect/,
    );
  });

  it("validation refuses a public gateway on OpenStack, where the gateway is a VM behind a security group", () => {
    const issues: [string, string][] = [];
    checkWireguard({
      users: [
        {
          value: app("a", { nodeCidr: "10.30.0.0/16" }),
          at: ["appClusters", 0],
          connector: connector({ publicEndpoint: true }),
        },
      ],
      appClusters: [],
      controlPlane: {
        value: { name: "cp", infrastructure: "openstack" },
        at: ["controlPlane"],
      },
      add: (at, message) => issues.push([at.join("."), message]),
    });
    assert.equal(issues.length, 1, JSON.stringify(issues));
    assert.equal(issues[0]?.[0], "appClusters.0.networkConnector.publicEndpoint");
    assert.match(issues[0]?.[1] ?? "", /list them in networkConnector\.allowedSources/);
  });
});
