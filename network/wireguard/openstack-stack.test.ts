import { strict as assert } from "node:assert";
import * as openstack from "@pulumi/openstack";
import * as pulumi from "@pulumi/pulumi";
import { OpenstackWireguardGateway } from "./openstack-gateway";
import { generateWireguardKeyPair } from "./model/keys";
import { planWireguard } from "./model/planner";
import { renderGatewayCloudInit } from "./model/render-cloud-init";
import { klutchProgram } from "../../programs/stack/program";
import {
  MockedRun,
  Registered,
  mockPulumi,
  parentTypeOf,
  registeredUrns,
  settle,
  SECRET_SIG,
  SECRET_MARKER,
} from "../../test/helpers/mocks";
import { stackSettings } from "../../test/helpers/stacks";

const RULE = "openstack:networking/secGroupRule:SecGroupRule";

async function drain(): Promise<void> {
  for (let i = 0; i < 4; i++) {
    await settle();
    await new Promise((r) => setTimeout(r, 20));
  }
}

const names = (rs: Registered[]) => rs.map((r) => r.name).sort();
const providerName = (r: Registered) => r.provider?.split("::")[3];

describe("openstack-example stack (mocks)", function () {
  this.timeout(30000);
  let run: MockedRun;
  before(async () => {
    run = mockPulumi(stackSettings("openstack-example"), "openstack-example");
    klutchProgram();
    await drain();
  });

  it("registers a network, router, Magnum template and cluster per cluster", () => {
    const count = (type: string) => run.ofType(type).length;
    assert.equal(count("klutch:cluster:OpenstackCluster"), 3);
    assert.equal(count("pulumi:providers:openstack"), 3);
    assert.equal(count("openstack:networking/network:Network"), 3);
    assert.equal(count("openstack:networking/subnet:Subnet"), 3);
    assert.equal(count("openstack:networking/router:Router"), 3);
    // Three own interfaces plus the interconnect of app-1's routed path.
    assert.equal(count("openstack:networking/routerInterface:RouterInterface"), 4);
    assert.equal(count("openstack:containerinfra/clusterTemplate:ClusterTemplate"), 3);
    assert.equal(count("openstack:containerinfra/cluster:Cluster"), 3);
    const subnet = run.ofType("openstack:networking/subnet:Subnet").find((s) => s.name.includes("app-1"))!;
    assert.equal(subnet.inputs.cidr, "10.41.0.0/24");
    assert.deepEqual(subnet.inputs.allocationPools, [{ start: "10.41.0.2", end: "10.41.0.246" }]);
    const template = run.ofType("openstack:containerinfra/clusterTemplate:ClusterTemplate")[0]!;
    assert.equal(template.inputs.coe, "kubernetes");
    assert.equal(template.inputs.externalNetworkId, "3d1c6e3b-0000-4000-8000-000000000001");
    assert.match(template.inputs.fixedNetwork, /-network-net-id$/);
    assert.match(template.inputs.fixedSubnet, /-network-subnet-id$/);
  });

  it("routes app-1 to the data-service network and opens only 5432 from app-1's CIDR", () => {
    const route = run.ofType("openstack:networking/routerRoute:RouterRoute");
    assert.equal(route.length, 1);
    assert.deepEqual(
      [route[0]!.inputs.routerId, route[0]!.inputs.destinationCidr, route[0]!.inputs.nextHop],
      ["openstack-example-app-1-network-router-id", "10.40.0.0/24", "10.41.0.247"],
    );
    const port = run.ofType("openstack:networking/port:Port");
    assert.deepEqual(
      port.map((p) => p.inputs.fixedIps[0].ipAddress),
      ["10.41.0.247"],
    );
    const iface = run
      .ofType("openstack:networking/routerInterface:RouterInterface")
      .find((i) => i.name.includes("interconnect"))!;
    assert.equal(iface.inputs.routerId, "openstack-example-control-plane-network-router-id");
    const rules = run.ofType(RULE);
    assert.deepEqual(
      rules.map((r) => [
        r.inputs.direction,
        r.inputs.protocol,
        r.inputs.portRangeMin,
        r.inputs.portRangeMax,
        r.inputs.remoteIpPrefix,
      ]),
      [["ingress", "tcp", 5432, 5432, "10.41.0.0/24"]],
    );
    assert.equal(providerName(rules[0]!), "openstack-example-control-plane-openstack");
    const groups = run.ofType("openstack:networking/secGroup:SecGroup");
    assert.equal(groups.length, 1);
    assert.equal(groups[0]!.inputs.deleteDefaultRules, true);
  });

  it("reserves one floating IP for the proxy (app-2) and nothing for app-1", () => {
    const fips = run.ofType("openstack:networking/floatingIp:FloatingIp");
    assert.deepEqual(names(fips), ["openstack-example-proxy-address-fip"]);
    assert.equal(fips[0]!.inputs.pool, "3d1c6e3b-0000-4000-8000-000000000001");
    assert.equal(run.ofType("openstack:compute/instance:Instance").length, 0);
  });

  it("keeps Magnum kubeconfigs secret and parents every cloud resource under its component", () => {
    for (const p of run.ofType("pulumi:providers:kubernetes")) {
      assert.equal(p.inputs.kubeconfig[SECRET_SIG], SECRET_MARKER, p.name);
      assert.match(p.inputs.kubeconfig.value, /magnum\.example\.test/);
    }
    const urns = registeredUrns().filter((u) =>
      /^(openstack:|pulumi:providers:openstack)/.test((u.split("::")[2] ?? "").split("$").pop() ?? ""),
    );
    assert.ok(urns.length >= 25, `${urns.length}`);
    for (const urn of urns) {
      const parent = parentTypeOf(urn);
      assert.ok(parent?.startsWith("klutch:"), urn);
      if (/\$openstack:networking\/(network|subnet|router):/.test(urn))
        assert.equal(parent, "klutch:openstack:ClusterNetwork");
      if (/\$openstack:containerinfra\//.test(urn)) assert.equal(parent, "klutch:cluster:OpenstackCluster");
      if (/\$openstack:networking\/(secGroup|secGroupRule|port|routerRoute):/.test(urn))
        assert.equal(parent, "klutch:network:OpenstackRoutedPath", urn);
    }
  });
});

describe("OpenstackWireguardGateway (mocks)", function () {
  this.timeout(30000);
  it("runs the gateway VM with secret cloud-init and opens UDP only to the clients, data ports only to the gateway", async () => {
    const run = mockPulumi({});
    const plan = planWireguard({
      tunnelCidr: "100.96.0.0/24",
      listenPort: 51820,
      endpoint: "203.0.113.10",
      appClusters: ["app-1"],
      connections: [{ name: "pg", appCluster: "app-1", instanceHost: "10.40.0.20", port: 5432 }],
    });
    const gateway = generateWireguardKeyPair();
    const client = generateWireguardKeyPair();
    const keys = { privateKey: gateway.privateKey, clientPublicKeys: { "app-1": client.publicKey } };
    const provider = new openstack.Provider("os", {});
    const gw = new OpenstackWireguardGateway("wg", {
      network: {
        provider,
        cidr: "10.40.0.0/24",
        externalNetworkId: "ext",
        networkId: pulumi.output("net-1"),
        subnetId: pulumi.output("subnet-1"),
        routerId: pulumi.output("router-1"),
      },
      plan,
      keys: pulumi.secret(keys),
      listenPort: 51820,
      clientCidrs: ["198.51.100.7/32"],
      dataServicePorts: [5432],
      image: "debian-12",
      flavor: "m1.small",
    });
    assert.equal(await pulumi.isSecret(gw.userData), true);
    await drain();

    const vm = run.ofType("openstack:compute/instance:Instance");
    assert.equal(vm.length, 1);
    assert.equal(vm[0]!.inputs.userData[SECRET_SIG], SECRET_MARKER, "user data is a secret");
    assert.equal(vm[0]!.inputs.userData.value, renderGatewayCloudInit(plan, keys));
    assert.ok(
      !JSON.stringify(run.resources.map((r) => ({ ...r.inputs, userData: undefined }))).includes(
        gateway.privateKey,
      ),
      "the private key appears nowhere but in the secret user data",
    );
    assert.ok(
      !JSON.stringify(run.resources.map((r) => ({ ...r.inputs, userData: undefined }))).includes(
        gateway.privateKey,
      ),
      "the private key appears nowhere but in the secret user data",
    );
    assert.deepEqual(vm[0]!.inputs.networks, [{ port: "wg-port-id" }]);
    assert.deepEqual(run.ofType("openstack:networking/port:Port")[0]!.inputs.fixedIps, [
      { subnetId: "subnet-1", ipAddress: "10.40.0.248" },
    ]);
    const rules = run
      .ofType(RULE)
      .map((r) => [
        r.name,
        r.inputs.direction,
        r.inputs.protocol,
        r.inputs.portRangeMin,
        r.inputs.portRangeMax,
        r.inputs.remoteIpPrefix,
      ])
      .sort();
    assert.deepEqual(rules, [
      ["wg-data-services-tcp-5432-10-40-0-248-32", "ingress", "tcp", 5432, 5432, "10.40.0.248/32"],
      // cloud-init installs the gateway's packages at first boot (packageMirrors, default any).
      ["wg-gateway-egress-packages-tcp-443-0-0-0-0-0", "egress", "tcp", 443, 443, "0.0.0.0/0"],
      ["wg-gateway-egress-packages-tcp-80-0-0-0-0-0", "egress", "tcp", 80, 80, "0.0.0.0/0"],
      ["wg-gateway-egress-tcp-5432-10-40-0-0-24", "egress", "tcp", 5432, 5432, "10.40.0.0/24"],
      ["wg-gateway-udp-51820-198-51-100-7-32", "ingress", "udp", 51820, 51820, "198.51.100.7/32"],
    ]);
    assert.equal(run.ofType("openstack:networking/floatingIpAssociate:FloatingIpAssociate").length, 1);
    for (const urn of registeredUrns().filter((u) => u.includes("$openstack:")))
      assert.equal(parentTypeOf(urn), "klutch:network:OpenstackWireguardGateway", urn);
  });
});
