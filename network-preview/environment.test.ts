import { strict as assert } from "node:assert";
import { buildReport } from "../lib/network-preview/model";
import { renderBridgeSettings } from "../lib/bridge/settings";
import { changedInputs, StepCollector, type ResourceStep } from "./engine-events";
import { environmentInput } from "./environment";

/**
 * The environment summary over engine steps shaped like the real `resourcePreEvent`s of an
 * AWS and an OpenStack stack (the mocked clouds cannot answer a real engine preview here).
 */

const SG = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule";
const sgUrn = `urn:pulumi:aws-mock::klutch::klutch:network:VpcPeering$${SG}::app-1-pg-5432`;
const rule = (cidr: string) => ({
  securityGroupId: "sg-0data",
  ipProtocol: "tcp",
  fromPort: 5432,
  toPort: 5432,
  cidrIpv4: cidr,
});

function collect(events: Record<string, unknown>[]): ResourceStep[] {
  const c = new StepCollector();
  for (const metadata of events)
    c.onEvent({ sequence: 0, timestamp: 0, resourcePreEvent: { metadata } } as never);
  return c.all();
}

describe("environment stack summary", () => {
  it("a security group rule opened to 0.0.0.0/0 is widened: grade 5, with the CIDR change as detail", () => {
    const steps = collect([
      {
        op: "update",
        urn: sgUrn,
        type: SG,
        old: { inputs: rule("10.10.0.0/16") },
        new: { inputs: rule("0.0.0.0/0") },
        detailedDiff: { cidrIpv4: { kind: "update", inputDiff: true } },
      },
    ]);
    const report = buildReport(environmentInput("aws-mock", steps));
    assert.equal(report.summary.grade, 5);
    assert.equal(report.exposure.widened[0]?.source, "0.0.0.0/0");
    assert.equal(report.otherChanges[0]?.kind, "security-group-rule");
    assert.equal(report.otherChanges[0]?.detail, "10.10.0.0/16 → 0.0.0.0/0");
  });

  it("a narrower CIDR is no widening; an OpenStack rule to a wider prefix is", () => {
    const narrower = collect([
      {
        op: "update",
        urn: sgUrn,
        type: SG,
        old: { inputs: rule("10.10.0.0/16") },
        new: { inputs: rule("10.10.1.0/24") },
      },
    ]);
    assert.equal(buildReport(environmentInput("aws-mock", narrower)).summary.grade, 3);
    const OS = "openstack:networking/secGroupRule:SecGroupRule";
    const osRule = (prefix: string) => ({
      securityGroupId: "f00",
      direction: "ingress",
      protocol: "tcp",
      portRangeMin: 5432,
      portRangeMax: 5432,
      remoteIpPrefix: prefix,
    });
    const wider = collect([
      {
        op: "update",
        urn: `urn:x::${OS}::r`,
        type: OS,
        old: { inputs: osRule("10.1.2.0/24") },
        new: { inputs: osRule("10.1.0.0/16") },
      },
    ]);
    const r = buildReport(environmentInput("openstack-mock", wider));
    assert.equal(r.summary.grade, 5);
    assert.match(r.exposure.widened[0]?.why ?? "", /not inside/);
  });

  it("a peering route replaced delete-first is an interruption hop with its replace reason", () => {
    const route = "aws:ec2/route:Route";
    const urn = `urn:pulumi:aws-mock::klutch::${route}::app-1-to-data`;
    const steps = collect([
      { op: "delete-replaced", urn, type: route, old: { inputs: { destinationCidrBlock: "10.10.0.0/16" } } },
      {
        op: "create-replacement",
        urn,
        type: route,
        new: { inputs: { destinationCidrBlock: "10.11.0.0/16" } },
        detailedDiff: { destinationCidrBlock: { kind: "update-replace" } },
      },
      { op: "replace", urn, type: route },
    ]);
    const hop = environmentInput("aws-mock", steps).otherChanges?.[0];
    assert.equal(hop?.kind, "peering-route");
    assert.equal(hop?.op, "replace");
    assert.equal(hop?.deleteBeforeReplace, true);
    assert.deepEqual(hop?.replaceReasons, ["destinationCidrBlock"]);
  });

  it("app clusters added and removed, and a proxy port range change, are named", () => {
    const settings = (from: number) =>
      renderBridgeSettings({
        version: 1,
        consumers: {
          "klutch-app-1": {
            appCluster: "app-1",
            implementation: "proxy",
            proxy: {
              serviceType: "LoadBalancer",
              portRange: { from, to: from + 99 },
              exposure: { sourceRanges: ["10.20.0.0/16"], internal: true, public: false },
            },
          },
        },
      });
    const cm = "kubernetes:core/v1:ConfigMap";
    const steps = collect([
      {
        op: "create",
        urn: "urn:x::klutch:bind:AppClusterBinding::app-3",
        type: "klutch:bind:AppClusterBinding",
      },
      {
        op: "delete",
        urn: "urn:x::klutch:bind:AppClusterBinding::app-2",
        type: "klutch:bind:AppClusterBinding",
      },
      {
        op: "update",
        urn: `urn:x::${cm}::klutch-bridge-settings`,
        type: cm,
        old: { inputs: { data: { "settings.json": settings(30000) } } },
        new: { inputs: { data: { "settings.json": settings(31000) } } },
      },
    ]);
    const input = environmentInput("local", steps);
    const details = (input.otherChanges ?? []).map((h) => `${h.kind}: ${h.detail ?? ""}`);
    assert.deepEqual(details.sort(), [
      "app-cluster: app cluster app-2 removed",
      "app-cluster: app cluster app-3 added",
      "proxy-settings: proxy port ranges klutch-app-1 30000-30099 → klutch-app-1 31000-31099",
    ]);
    assert.match(input.notes?.[0] ?? "", /--all-groups/);
    // The proxy's source ranges stay the same, only the ports move: not widened, but changed.
    const report = buildReport(input);
    assert.equal(report.exposure.widened.length, 0);
    assert.equal(report.exposure.added.length, 1);
  });

  it("changedInputs names the top-level inputs that differ", () => {
    assert.deepEqual(changedInputs({ a: 1, b: [1], c: "x" }, { a: 1, b: [2], d: true }), ["b", "c", "d"]);
    assert.deepEqual(changedInputs(undefined, { a: 1 }), []);
  });
});
