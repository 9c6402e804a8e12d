import { strict as assert } from "node:assert";
import { WireguardPlanError, WireguardPlanInput, normalizeEndpoint, planWireguard } from "./planner";

function input(overrides: Partial<WireguardPlanInput> = {}): WireguardPlanInput {
  return {
    tunnelCidr: "100.96.0.0/24",
    listenPort: 51820,
    endpoint: "vpn.example.test",
    appClusters: ["app-1", "app-2"],
    connections: [
      { name: "pg-a", appCluster: "app-1", instanceHost: "10.50.0.10", port: 5432 },
      { name: "pg-a-dash", appCluster: "app-1", instanceHost: "10.50.0.11", port: 8080 },
      { name: "pg-b", appCluster: "app-2", instanceHost: "10.50.0.20", port: 5432 },
    ],
    clusterCidrs: [
      { name: "app-1 nodeCidr", cidr: "10.1.0.0/16" },
      { name: "app-2 nodeCidr", cidr: "10.2.0.0/16" },
    ],
    dataServiceCidrs: [{ name: "control-plane dataServiceCidr", cidr: "10.50.0.0/16" }],
    ...overrides,
  };
}

function problems(fn: () => unknown): string[] {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof WireguardPlanError, `expected a WireguardPlanError, got ${String(e)}`);
    return e.problems;
  }
  assert.fail("expected the plan to fail");
}

describe("WireGuard planner", () => {
  it("gives the gateway the first usable address and each app cluster the next free one", () => {
    const plan = planWireguard(input());
    assert.equal(plan.gateway.tunnelAddress, "100.96.0.1");
    assert.equal(plan.gateway.interface.address, "100.96.0.1/24");
    assert.equal(plan.gateway.interface.listenPort, 51820);
    assert.deepEqual(plan.assignments, { "app-1": "100.96.0.2", "app-2": "100.96.0.3" });
    assert.deepEqual(
      plan.clients.map((c) => c.interface.address),
      ["100.96.0.2/32", "100.96.0.3/32"],
    );
  });

  it("is the same on every run", () => {
    assert.deepEqual(planWireguard(input()), planWireguard(input()));
    assert.deepEqual(planWireguard(input()), JSON.parse(JSON.stringify(planWireguard(input()))));
  });

  it("keeps earlier addresses: adding or removing an app cluster moves nobody else", () => {
    const first = planWireguard(input());
    // a cluster added at the front would take .2 by order alone; previous assignments win
    const grown = planWireguard(
      input({ appClusters: ["app-0", "app-1", "app-2"], previousAssignments: first.assignments }),
    );
    assert.deepEqual(grown.assignments, {
      "app-0": "100.96.0.4",
      "app-1": "100.96.0.2",
      "app-2": "100.96.0.3",
    });
    // removing app-1 frees .2 without moving app-2; the next new cluster takes the lowest free
    const shrunk = planWireguard(
      input({
        appClusters: ["app-2", "app-3"],
        connections: [{ name: "pg-b", appCluster: "app-2", instanceHost: "10.50.0.20", port: 5432 }],
        previousAssignments: grown.assignments,
      }),
    );
    assert.deepEqual(shrunk.assignments, { "app-2": "100.96.0.3", "app-3": "100.96.0.2" });
    // appended clusters keep the others stable even without previous assignments
    const appended = planWireguard(input({ appClusters: ["app-1", "app-2", "app-3"] }));
    assert.equal(appended.assignments["app-1"], first.assignments["app-1"]);
    assert.equal(appended.assignments["app-2"], first.assignments["app-2"]);
  });

  it("drops earlier addresses that no longer fit (tunnel CIDR changed)", () => {
    const plan = planWireguard(
      input({
        tunnelCidr: "100.97.0.0/24",
        previousAssignments: { "app-1": "100.96.0.2", "app-2": "100.97.0.9" },
      }),
    );
    assert.deepEqual(plan.assignments, { "app-1": "100.97.0.2", "app-2": "100.97.0.9" });
  });

  it("fails clearly when the tunnel CIDR is exhausted", () => {
    const p = problems(() => planWireguard(input({ tunnelCidr: "100.96.0.0/30" })));
    assert.equal(p.length, 1);
    assert.match(p[0]!, /tunnelCidr 100\.96\.0\.0\/30 is exhausted/);
    assert.match(p[0]!, /2 usable address/);
    assert.match(p[0]!, /2 app cluster/);
    assert.match(p[0]!, /larger tunnelCidr/);
    // /30 holds the gateway and exactly one client
    const one = planWireguard(
      input({ tunnelCidr: "100.96.0.0/30", appClusters: ["app-1"], connections: [] }),
    );
    assert.deepEqual(one.assignments, { "app-1": "100.96.0.2" });
    assert.match(
      problems(() => planWireguard(input({ tunnelCidr: "100.96.0.0/31" })))[0]!,
      /no usable addresses/,
    );
    assert.match(
      problems(() => planWireguard(input({ tunnelCidr: "100.96.0.1/24" })))[0]!,
      /tunnelCidr "100\.96\.0\.1\/24" has host bits set/,
    );
  });

  it("names both CIDRs when the tunnel overlaps a cluster or data-service network", () => {
    const p = problems(() =>
      planWireguard(
        input({
          tunnelCidr: "10.1.128.0/24",
          dataServiceCidrs: [{ name: "ds", cidr: "10.0.0.0/8" }],
          connections: [],
        }),
      ),
    );
    assert.deepEqual(p, [
      "tunnelCidr 10.1.128.0/24 overlaps the cluster network app-1 nodeCidr 10.1.0.0/16; choose a tunnelCidr outside every cluster and data-service network",
      "tunnelCidr 10.1.128.0/24 overlaps the data-service network ds 10.0.0.0/8; choose a tunnelCidr outside every cluster and data-service network",
    ]);
  });

  it("limits allowed IPs to the host /32s of that app cluster's own connections", () => {
    const plan = planWireguard(input());
    const [c1, c2] = plan.clients;
    assert.deepEqual(c1!.interface.peers, [
      {
        name: "gateway",
        allowedIps: ["100.96.0.1/32", "10.50.0.10/32", "10.50.0.11/32"],
        endpoint: "vpn.example.test:51820",
        persistentKeepalive: 25,
      },
    ]);
    assert.deepEqual(c1!.routes, ["100.96.0.1/32", "10.50.0.10/32", "10.50.0.11/32"]);
    assert.deepEqual(c2!.interface.peers[0]!.allowedIps, ["100.96.0.1/32", "10.50.0.20/32"]);
    // the gateway knows each client only by its tunnel /32
    assert.deepEqual(plan.gateway.interface.peers, [
      { name: "app-1", allowedIps: ["100.96.0.2/32"] },
      { name: "app-2", allowedIps: ["100.96.0.3/32"] },
    ]);
    assert.deepEqual(plan.gateway.allowedFlows, [
      { appCluster: "app-1", source: "100.96.0.2", host: "10.50.0.10", port: 5432 },
      { appCluster: "app-1", source: "100.96.0.2", host: "10.50.0.11", port: 8080 },
      { appCluster: "app-2", source: "100.96.0.3", host: "10.50.0.20", port: 5432 },
    ]);
    // an app cluster without connections routes nothing but the gateway
    const idle = planWireguard(input({ appClusters: ["app-1", "app-2", "app-3"] }));
    assert.deepEqual(idle.clients[2]!.routes, ["100.96.0.1/32"]);
    assert.deepEqual(idle.clients[2]!.connections, []);
  });

  it("dedupes hosts and gives clashing ports their own forwarder port", () => {
    const plan = planWireguard(
      input({
        appClusters: ["app-1"],
        connections: [
          { name: "pg-z", appCluster: "app-1", instanceHost: "10.50.0.10", port: 5432 },
          { name: "pg-a", appCluster: "app-1", instanceHost: "10.50.0.12", port: 5432 },
          { name: "pg-m", appCluster: "app-1", instanceHost: "10.50.0.10", port: 9187 },
        ],
      }),
    );
    const c = plan.clients[0]!;
    assert.deepEqual(c.routes, ["100.96.0.1/32", "10.50.0.10/32", "10.50.0.12/32"]);
    assert.deepEqual(
      c.connections.map((x) => [x.name, x.port, x.forwarderPort]),
      [
        ["pg-a", 5432, 5432],
        ["pg-m", 9187, 9187],
        ["pg-z", 5432, 20000],
      ],
    );
  });

  it("honours wireguardVPN clientIP and vpnEndpoint", () => {
    const plan = planWireguard(
      input({
        connections: [
          {
            name: "pg-a",
            appCluster: "app-1",
            instanceHost: "10.50.0.10",
            port: 5432,
            enhancements: [
              { InstanceType: "PostgreSQL" },
              { ConnectionType: "wireguardVPN", vpnEndpoint: "203.0.113.7:4500", clientIP: "100.96.0.77" },
            ],
          },
          { name: "pg-b", appCluster: "app-2", instanceHost: "10.50.0.20", port: 5432 },
        ],
        // app-1 asks for .77 and gets it over its earlier .2; app-2 keeps its earlier .5
        previousAssignments: { "app-1": "100.96.0.2", "app-2": "100.96.0.5" },
      }),
    );
    assert.deepEqual(plan.assignments, { "app-1": "100.96.0.77", "app-2": "100.96.0.5" });
    assert.equal(plan.clients[0]!.endpoint, "203.0.113.7:4500");
    assert.equal(plan.clients[0]!.interface.peers[0]!.endpoint, "203.0.113.7:4500");
    assert.equal(plan.clients[1]!.endpoint, "vpn.example.test:51820");
    // vpnEndpoint without a port gets the listen port; it also stands in for a missing endpoint
    const noDefault = planWireguard(
      input({
        endpoint: undefined,
        appClusters: ["app-1"],
        connections: [
          {
            name: "pg-a",
            appCluster: "app-1",
            instanceHost: "10.50.0.10",
            port: 5432,
            enhancements: [{ ConnectionType: "wireguardVPN", vpnEndpoint: "gw.example.test" }],
          },
        ],
      }),
    );
    assert.equal(noDefault.clients[0]!.endpoint, "gw.example.test:51820");
  });

  it("rejects clientIPs outside the tunnel, on reserved addresses or already taken", () => {
    const conn = (name: string, appCluster: string, clientIP: string) => ({
      name,
      appCluster,
      instanceHost: "10.50.0.10",
      port: 5432,
      enhancements: [{ ConnectionType: "wireguardVPN", clientIP }],
    });
    const run = (connections: WireguardPlanInput["connections"], previousAssignments = {}) =>
      problems(() => planWireguard(input({ connections, previousAssignments })));
    assert.deepEqual(run([conn("pg-a", "app-1", "100.97.0.5")]), [
      "connections[0] (pg-a) wireguardVPN.clientIP 100.97.0.5 is outside tunnelCidr 100.96.0.0/24; pick an address inside it",
    ]);
    assert.match(run([conn("pg-a", "app-1", "100.96.0.1")])[0]!, /is the gateway's tunnel address/);
    assert.match(run([conn("pg-a", "app-1", "100.96.0.255")])[0]!, /network or broadcast address/);
    assert.match(run([conn("pg-a", "app-1", "100.96.0.0")])[0]!, /network or broadcast address/);
    assert.match(
      run([conn("pg-a", "app-1", "100.96.0.9"), conn("pg-b", "app-2", "100.96.0.9")])[0]!,
      /connections\[1\] \(pg-b\) wireguardVPN\.clientIP 100\.96\.0\.9 is also requested by app cluster app-1/,
    );
    assert.match(
      run([conn("pg-b", "app-2", "100.96.0.2")], { "app-1": "100.96.0.2" })[0]!,
      /100\.96\.0\.2 is already assigned to app cluster app-1; pick a free address/,
    );
    assert.match(
      run([conn("pg-a", "app-1", "100.96.0.9"), conn("pg-a2", "app-1", "100.96.0.10")])[0]!,
      /differs from 100\.96\.0\.9 of connections\[0\] \(pg-a\); app cluster app-1 has one tunnel address/,
    );
    assert.match(
      run([conn("pg-a", "app-1", "not-an-ip")])[0]!,
      /clientIP "not-an-ip" must be an IPv4 address/,
    );
  });

  it("rejects bad connections, naming the field and the fix", () => {
    const p = problems(() =>
      planWireguard(
        input({
          endpoint: undefined,
          connections: [
            { name: "pg-a", appCluster: "app-9", instanceHost: "pg.example.test", port: 5432 },
            { name: "pg-a", appCluster: "app-1", instanceHost: "10.99.0.1", port: 70000 },
            { name: "Bad_Name", appCluster: "app-1", instanceHost: "100.96.0.50", port: 5432 },
          ],
        }),
      ),
    );
    assert.deepEqual(p, [
      'connections[0] (pg-a).appCluster "app-9" is not one of the tunnel\'s app clusters (app-1, app-2); add it to appClusters or fix the name',
      'connections[0] (pg-a).instanceHost "pg.example.test" must be an IPv4 address: WireGuard routes by address (AllowedIPs), so resolve the host name first',
      "connections[1] (pg-a).name is used by another connection; connection names must be unique",
      "connections[1] (pg-a).instanceHost 10.99.0.1 is outside the data-service networks (control-plane dataServiceCidr 10.50.0.0/16); the gateway only forwards into those",
      "connections[1] (pg-a).port 70000 must be a TCP port from 1 to 65535",
      'connections[2].name "Bad_Name" must be a DNS-1123 label such as pg-main',
      "connections[2] (Bad_Name).instanceHost 100.96.0.50 lies inside tunnelCidr 100.96.0.0/24; pick a tunnelCidr apart from the data-service network",
      "connections[2] (Bad_Name).instanceHost 100.96.0.50 is outside the data-service networks (control-plane dataServiceCidr 10.50.0.0/16); the gateway only forwards into those",
      "no gateway endpoint for app cluster app-1: set the wireguard connector's endpoint (host:port where app clusters reach the gateway) or a wireguardVPN enhancement with vpnEndpoint",
      "no gateway endpoint for app cluster app-2: set the wireguard connector's endpoint (host:port where app clusters reach the gateway) or a wireguardVPN enhancement with vpnEndpoint",
    ]);
    assert.match(
      problems(() => planWireguard(input({ endpoint: "a b:1" })))[0]!,
      /^endpoint "a b:1" must be host or host:port/,
    );
    assert.match(
      problems(() => planWireguard(input({ listenPort: 0 })))[0]!,
      /^listenPort 0 must be a UDP port/,
    );
    assert.match(
      problems(() => planWireguard(input({ appClusters: ["app-1", "app-1"] })))[0]!,
      /lists app-1 twice/,
    );
    assert.match(
      problems(() => planWireguard(input({ appClusters: ["app-1", "app-2", "gateway"] })))[0]!,
      /"gateway" is reserved for the tunnel's gateway; rename the app cluster/,
    );
  });

  it("normalizes endpoints", () => {
    assert.equal(normalizeEndpoint("gw.example.test", 51820), "gw.example.test:51820");
    assert.equal(normalizeEndpoint("192.0.2.1:4500", 51820), "192.0.2.1:4500");
    assert.equal(normalizeEndpoint("[2001:db8::1]", 51820), "[2001:db8::1]:51820");
    assert.equal(normalizeEndpoint("gw:99999", 51820), undefined);
    assert.equal(normalizeEndpoint("", 51820), undefined);
  });

  it("keepalive can be turned off", () => {
    const plan = planWireguard(input({ persistentKeepalive: 0 }));
    assert.equal(plan.clients[0]!.interface.peers[0]!.persistentKeepalive, undefined);
  });
});
