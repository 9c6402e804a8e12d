import { strict as assert } from "node:assert";
import * as pulumi from "@pulumi/pulumi";
import {
  admitWireguard,
  keepPorts,
  localConnection,
  localGatewayNames,
  localGroupPlan,
  localNames,
} from "./local-plan";
import { localAllowedHostsProvider } from "../local/allowed-hosts-provider";
import { localWireguardClientProvider } from "../local/client-provider";
import { localTcpForwarderProvider } from "../local/forwarder-provider";

const APP = localNames("team-a/wireguard").appCluster;
const conn = (name: string, host: string, port = 5432) => localConnection(name, APP, host, port);

describe("WireGuard local realisation plan (pure)", () => {
  it("names fit Linux interface names and differ per group and per state dir", () => {
    const a = localNames("team-a/wireguard");
    const b = localNames("team-b/wireguard");
    for (const n of [a, b]) {
      assert.ok(n.ifname.length <= 15 && n.linkIfname.length <= 15, JSON.stringify(n));
      assert.notEqual(n.appCluster, "gateway");
    }
    assert.notEqual(a.netns, b.netns);
    assert.notEqual(a.ifname, b.ifname);
    const g1 = localGatewayNames("/s/one", "ds");
    const g2 = localGatewayNames("/s/two/", "ds");
    assert.ok(g1.ifname.length <= 15);
    assert.notEqual(g1.ifname, g2.ifname);
    assert.equal(g2.dir, "/s/two/wireguard/ds");
  });

  it("a bad connection is rejected on its own; the others are admitted", () => {
    const { admitted, rejected } = admitWireguard(APP, [
      conn("good", "198.51.100.10"),
      conn("by-name", "db.example.test"),
      conn("in-tunnel", "100.96.0.7"),
    ]);
    assert.deepEqual(
      admitted.map((c) => c.name),
      ["good"],
    );
    assert.deepEqual(Object.keys(rejected).sort(), ["by-name", "in-tunnel"]);
    assert.match(rejected["by-name"]!, /must be an IPv4 address/);
    assert.match(rejected["in-tunnel"]!, /inside tunnelCidr/);
  });

  it("plans the client's allowed hosts and the gateway's flows from its tunnel address", () => {
    const plan = localGroupPlan(
      APP,
      [conn("a", "198.51.100.10"), conn("b", "198.51.100.11"), conn("c", "198.51.100.10", 6432)],
      "100.96.0.9",
    );
    assert.equal(plan.gatewayAddress, "100.96.0.1");
    assert.deepEqual(plan.allowedIps, ["100.96.0.1/32", "198.51.100.10/32", "198.51.100.11/32"]);
    assert.deepEqual(plan.flows, [
      "100.96.0.9 . 198.51.100.10 . 5432",
      "100.96.0.9 . 198.51.100.11 . 5432",
      "100.96.0.9 . 198.51.100.10 . 6432",
    ]);
    assert.deepEqual(
      plan.forwarders.map((f) => [f.name, f.listenPort]),
      [
        ["a", 5432],
        ["b", 20000],
        ["c", 6432],
      ],
    );
  });

  it("a connection added later never moves an existing forwarder's port", () => {
    // "a" sorts first and would take 5432 from "m", which holds it already.
    const plan = localGroupPlan(APP, [conn("a", "198.51.100.10"), conn("m", "198.51.100.11")], undefined, {
      m: 5432,
    });
    assert.deepEqual(
      plan.forwarders.map((f) => [f.name, f.listenPort]),
      [
        ["a", 20000],
        ["m", 5432],
      ],
    );
    assert.deepEqual(
      [
        ...keepPorts(
          [
            { name: "x", forwarderPort: 20000 },
            { name: "y", forwarderPort: 20001 },
          ],
          { y: 20000, x: 20000 },
        ),
      ],
      [
        ["x", 20000],
        ["y", 20001],
      ],
    );
  });

  it("the local providers serialize without this project's modules", async () => {
    for (const provider of [
      localWireguardClientProvider,
      localAllowedHostsProvider,
      localTcpForwarderProvider,
    ]) {
      const s = await pulumi.runtime.serializeFunction(() => provider, { allowSecrets: true });
      assert.doesNotMatch(s.text, /require\("\.{1,2}\//);
    }
  });
});
