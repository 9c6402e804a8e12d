import { strict as assert } from "node:assert";
import {
  clientConfigKey,
  configServerArgs,
  flowsKey,
  parseClientConfig,
  renderClientConfig,
  renderFlowsNft,
} from "./cluster-config";
import { planWireguard } from "./planner";
import { renderClientManifests, renderGatewayManifests } from "./render-k8s";

describe("WireGuard on clusters: what the bridge publishes for the tunnel's pods", () => {
  it("names each group's keys by its client's tunnel address, valid ConfigMap keys", () => {
    assert.equal(flowsKey("100.96.0.2"), "flows-100.96.0.2.nft");
    assert.equal(clientConfigKey("100.96.0.2"), "client-100.96.0.2.conf");
    for (const key of [flowsKey("100.96.0.2"), clientConfigKey("100.96.0.2")])
      assert.match(key, /^[-._a-zA-Z0-9]+$/);
  });

  it("the flows file adds the group's elements to the gateway's sets, and nothing when it serves nothing", () => {
    assert.equal(
      renderFlowsNft("team-a/wireguard", ["100.96.0.2 . 10.0.0.5 . 5432"], ["10.0.0.5 . 5432"]),
      [
        "# klutch bridge, group team-a/wireguard: flows of its client",
        "add element inet klutch_wireguard flows { 100.96.0.2 . 10.0.0.5 . 5432 }",
        "add element inet klutch_wireguard services { 10.0.0.5 . 5432 }",
        "",
      ].join("\n"),
    );
    assert.doesNotMatch(renderFlowsNft("g", [], []), /add element/);
  });

  it("the forwarder list is sorted by listen port and reads back; a malformed line rejects the whole list", () => {
    const text = renderClientConfig("g", [
      { listenPort: 20000, host: "10.0.0.6", port: 5432 },
      { listenPort: 5432, host: "10.0.0.5", port: 5432 },
    ]);
    assert.deepEqual(parseClientConfig(text), [
      { listenPort: 5432, host: "10.0.0.5", port: 5432 },
      { listenPort: 20000, host: "10.0.0.6", port: 5432 },
    ]);
    for (const bad of [
      "forward 5432 db.example.test 5432",
      "forward x 10.0.0.5 5432",
      "forward 1 10.0.0.5 2 3",
      "rm -rf /",
    ])
      assert.throws(() => parseClientConfig(`${text}${bad}\n`), /is not "forward <port> <ipv4> <port>"/);
  });

  it("the list server's command has no comma or colon for socat's address syntax to split", () => {
    const [listen, system] = configServerArgs(51821);
    assert.equal(listen, "TCP-LISTEN:51821,fork,reuseaddr");
    const command = (system ?? "").replace(/^SYSTEM:/, "");
    assert.doesNotMatch(command, /[,:]/);
    assert.match(command, /client-\$SOCAT_PEERADDR\.conf/);
    // Its answer always ends with `end`, list or none: the agent tells a cut-short one by that.
    assert.match(command, /; echo end$/);
  });

  describe("the rendered pods with bridgeConnections", () => {
    const plan = planWireguard({
      tunnelCidr: "100.96.0.0/24",
      listenPort: 51820,
      endpoint: "vpn.example.test",
      appClusters: ["app-1"],
      connections: [],
    });
    const opts = {
      name: "wg",
      gatewayNamespace: "klutch-network",
      clientNamespace: "klutch-wireguard",
      bridgeConnections: { configPort: 51821 },
    };

    it("the gateway includes the groups' flow files, admits the list port only from the tunnel to itself, and serves lists as nobody", () => {
      const g = renderGatewayManifests(plan, opts);
      const rules = g.rules.data["rules.nft"] ?? "";
      assert.match(rules, /include "\/etc\/klutch\/flows\/flows-\*\.nft"\n$/);
      assert.match(
        rules,
        /iifname "wg0" ip daddr 100\.96\.0\.1 tcp dport 51821 accept\n {4}iifname != \{ "wg0", "lo" \} tcp dport 51821 drop/,
      );
      assert.deepEqual(g.flows?.data, {});
      assert.equal(g.flows?.metadata.name, "wg-gateway-flows");
      const server = g.deployment.spec.template.spec.containers.find((c) => c.name === "forwarder-lists");
      assert.equal(server?.securityContext.runAsUser, 65534);
      assert.deepEqual(server?.securityContext.capabilities, { drop: ["ALL"] });
      assert.deepEqual(server?.volumeMounts, [
        { name: "flows", mountPath: "/etc/klutch/flows", readOnly: true },
      ]);
      // Without bridgeConnections nothing of it: the static form is unchanged.
      const plain = renderGatewayManifests(plan, { ...opts, bridgeConnections: undefined });
      assert.equal(plain.flows, undefined);
      assert.doesNotMatch(plain.rules.data["rules.nft"] ?? "", /include|51821/);
    });

    it("the client gets an agent as nobody that shares hosts with the tunnel container, and a headless Service without ports", () => {
      const c = renderClientManifests(plan, "app-1", opts);
      const containers = c.deployment.spec.template.spec.containers;
      assert.deepEqual(
        containers.map((x) => x.name),
        ["wireguard", "forwarders"],
      );
      const agent = containers[1];
      assert.equal(agent?.securityContext.runAsUser, 65534);
      assert.match(agent?.command?.[2] ?? "", /gw=100\.96\.0\.1\ncfgport=51821/);
      assert.deepEqual(
        containers[0]?.volumeMounts?.find((m) => m.name === "shared"),
        { name: "shared", mountPath: "/run/klutch", readOnly: false },
      );
      assert.equal(c.headless?.metadata.name, "wg-client");
      assert.equal(c.headless?.spec.clusterIP, "None");
      assert.deepEqual(c.headless?.spec.ports, []);
    });
  });
});
