import { strict as assert } from "node:assert";
import { routedPathProblems } from "./construct";
import { KlutchProvider } from "../../../programs/klutch-provider/provider";
import { mockPulumi } from "../../../test/helpers/mocks";
import { finish, outputsOf } from "../../../test/helpers/provider";

/** Cloud paths: no AWS or OpenStack here, so these run against the mocks only. */

describe("klutch provider: OpenstackRoutedPath (mocks only)", function () {
  this.timeout(30000);
  const app = { cidr: "10.10.0.0/24", networkId: "net-app", subnetId: "sub-app", routerId: "rtr-app" };
  const data = {
    region: "RegionTwo",
    cidr: "10.20.0.0/24",
    networkId: "net-ds",
    subnetId: "sub-ds",
    routerId: "rtr-ds",
  };

  it("the interconnect port in the app subnet, the data-service router's interface, the app route and the group", async () => {
    const r = mockPulumi({});
    const made = await new KlutchProvider().construct(
      "route",
      "klutch:network:OpenstackRoutedPath",
      { app, dataService: data, dataServicePorts: [5432], appLabel: "app-1" },
      {},
    );
    const { values } = await outputsOf(made.state);
    await finish();
    const providers = r.ofType("pulumi:providers:openstack");
    assert.deepEqual(providers.map((p) => [p.name, p.inputs.region]).sort(), [
      ["route-app-openstack", undefined],
      ["route-data-service-openstack", "RegionTwo"],
    ]);
    const port = r.ofType("openstack:networking/port:Port")[0]!;
    assert.equal(port.inputs.networkId, "net-app");
    assert.ok(port.provider?.includes("route-app-openstack"));
    const iface = r.ofType("openstack:networking/routerInterface:RouterInterface")[0]!;
    assert.equal(iface.inputs.routerId, "rtr-ds");
    assert.ok(iface.provider?.includes("route-data-service-openstack"));
    const route = r.ofType("openstack:networking/routerRoute:RouterRoute")[0]!;
    assert.equal(route.inputs.destinationCidr, "10.20.0.0/24");
    assert.equal(route.inputs.nextHop, port.inputs.fixedIps[0].ipAddress);
    const rules = r.ofType("openstack:networking/secGroupRule:SecGroupRule");
    assert.deepEqual(
      rules.map((x) => [x.inputs.portRangeMin, x.inputs.remoteIpPrefix]),
      [[5432, "10.10.0.0/24"]],
    );
    assert.equal(values.securityGroupId, "route-data-services-id");
  });

  it("refuses overlapping networks and a bad port in one message, before anything is registered", async () => {
    const r = mockPulumi({});
    await assert.rejects(
      new KlutchProvider().construct(
        "route",
        "klutch:network:OpenstackRoutedPath",
        { app, dataService: { ...data, cidr: "10.10.0.0/16" }, dataServicePorts: [70000] },
        {},
      ),
      /OpenstackRoutedPath route: invalid arguments:\n {2}- dataServicePorts\[0\]: must be at most 65535/,
    );
    assert.deepEqual(r.resources, []);
    assert.deepEqual(routedPathProblems({ app, dataService: { ...data, cidr: "10.10.0.0/16" } }), [
      "app.cidr 10.10.0.0/24 overlaps the data-service network 10.10.0.0/16; routed paths need disjoint CIDRs",
    ]);
  });
});
