import { strict as assert } from "node:assert";
import { proxyName } from "../../lib/bridge/model";
import { bridgeSettings } from "./bridge-settings";
import { renderBridgeSettings } from "../../lib/bridge/settings";
import { groupSettings, parseBridgeSettings } from "../group-settings";
import { environmentSchema } from "../../components/config/schema";

function config(appClusters: unknown[]) {
  return environmentSchema.parse({
    environment: "t",
    controlPlane: { name: "cp", infrastructure: "local" },
    appClusters,
  });
}

describe("Crossplane bridge: settings from the environment (pure)", () => {
  const settings = bridgeSettings(
    config([
      { name: "b-app", infrastructure: "local" },
      {
        name: "a-app",
        infrastructure: "local",
        networkConnector: { implementation: "proxy", serviceType: "ClusterIP", dedicatedCpus: 1 },
      },
      { name: "wg", infrastructure: "local", networkConnector: { implementation: "wireguard" } },
    ]),
  );

  it("keys each app cluster's connector by the consumer namespace its claims land in, with the config's defaults", () => {
    assert.deepEqual(settings.consumers, {
      "cluster-b-app": {
        appCluster: "b-app",
        implementation: "proxy",
        proxy: {
          serviceType: "LoadBalancer",
          portRange: { from: 30000, to: 30999 },
          // A local app cluster's consumers connect from loopback, a private range.
          exposure: { sourceRanges: ["127.0.0.0/8"], internal: true, public: false },
        },
      },
      "cluster-a-app": {
        appCluster: "a-app",
        implementation: "proxy",
        proxy: {
          serviceType: "ClusterIP",
          portRange: { from: 30000, to: 30999 },
          dedicatedCpus: 1,
          exposure: { sourceRanges: [], internal: true, public: false },
        },
      },
      "cluster-wg": { appCluster: "wg", implementation: "wireguard" },
    });
  });

  it("renders sorted, byte-stable JSON that parses back to the same settings", () => {
    const text = renderBridgeSettings(settings);
    assert.deepEqual(Object.keys(JSON.parse(text).consumers), [
      "cluster-a-app",
      "cluster-b-app",
      "cluster-wg",
    ]);
    assert.deepEqual(parseBridgeSettings(text), JSON.parse(text));
    const reordered = {
      version: 1 as const,
      consumers: Object.fromEntries(Object.entries(settings.consumers).reverse()),
    };
    assert.equal(renderBridgeSettings(reordered), text);
  });

  it("rejects malformed settings naming the field", () => {
    assert.throws(() => parseBridgeSettings("{"), /bridge settings: settings\.json is not JSON/);
    assert.throws(() => parseBridgeSettings('{"version":2,"consumers":{}}'), /bridge settings: version: /);
    const bad = (proxy: unknown) =>
      JSON.stringify({ version: 1, consumers: { ns: { appCluster: "a", implementation: "proxy", proxy } } });
    assert.throws(
      () => parseBridgeSettings(bad({ serviceType: "ClusterIP", portRange: { from: 2, to: 1 } })),
      /bridge settings: consumers\.ns\.proxy\.portRange: from must not be greater than to/,
    );
    assert.throws(
      () => parseBridgeSettings(bad({ serviceType: "ExternalName", portRange: { from: 1, to: 2 } })),
      /bridge settings: consumers\.ns\.proxy\.serviceType: /,
    );
  });

  it("looks up a group's own settings by its consumer namespace and implementation", () => {
    assert.deepEqual(groupSettings(settings, "cluster-a-app/proxy"), {
      serviceType: "ClusterIP",
      portRange: { from: 30000, to: 30999 },
      dedicatedCpus: 1,
      exposure: { sourceRanges: [], internal: true, public: false },
    });
    assert.equal(groupSettings(settings, "cluster-wg/wireguard"), undefined);
    assert.equal(groupSettings(settings, "cluster-a-app/wireguard"), undefined);
    assert.equal(groupSettings(settings, "_unclaimed/proxy"), undefined);
    assert.equal(groupSettings(undefined, "cluster-a-app/proxy"), undefined);
  });

  it("names each group's proxy with a DNS-1035 label of at most 63 characters, distinct per group", () => {
    assert.equal(proxyName("team-a/proxy"), "np-team-a-proxy");
    assert.equal(proxyName("_unclaimed/proxy"), "np-unclaimed-proxy");
    const long = `${"x".repeat(60)}/proxy`;
    const other = `${"x".repeat(60)}y/proxy`;
    for (const key of [long, other]) assert.match(proxyName(key), /^[a-z]([-a-z0-9]{0,61}[a-z0-9])$/);
    assert.notEqual(proxyName(long), proxyName(other));
  });
});
