import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import type { EngineEvent } from "@pulumi/pulumi/automation";
import { buildReport, type ConnectionInput } from "../../lib/network-preview/model";
import { withTraffic } from "../../lib/network-preview/cost";
import { reportSchema } from "../../lib/network-preview/schema";
import { renderBridgeSettings } from "../../lib/bridge/settings";
import { renderMarkdown as renderMarkdownOf } from "../../lib/network-preview/render";
import { StepCollector } from "./engine-events";
import { changedInputs, type ResourceStep } from "./plan/steps";
import { planGroups } from "./plan/groups";
import {
  consumerNamespaces,
  environmentInput,
  markUnreachable,
  removedNamespaces,
  routedReach,
  unreachableReasons,
} from "./environment";
import { networkPath } from "../../test/helpers/network-path";

/**
 * The environment summary over engine steps shaped like the real `resourcePreEvent`s of an
 * AWS and an OpenStack stack (the mocked clouds cannot answer a real engine preview here).
 */

const SG = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule";
/** The settings ConfigMap as components/bridge/bridge-settings.ts names it. */
const SETTINGS_META = { name: "klutch-bridge-settings", namespace: "klutch-network" };
const sgUrn = `urn:pulumi:aws-mock::klutch::klutch:network:VpcPeering$${SG}::app-1-pg-5432`;
const rule = (cidr: string) => ({
  securityGroupId: "sg-0data",
  ipProtocol: "tcp",
  fromPort: 5432,
  toPort: 5432,
  cidrIpv4: cidr,
});

const ROUTE = "aws:ec2/route:Route";

/** The engine's steps of a route replaced delete-first because its destination changed. */
function routeReplaced(urn: string): Record<string, unknown>[] {
  return [
    { op: "delete-replaced", urn, type: ROUTE, old: { inputs: { destinationCidrBlock: "10.10.0.0/16" } } },
    {
      op: "create-replacement",
      urn,
      type: ROUTE,
      new: { inputs: { destinationCidrBlock: "10.11.0.0/16" } },
      detailedDiff: { destinationCidrBlock: { diffKind: "update-replace", inputDiff: true } },
    },
    { op: "replace", urn, type: ROUTE },
  ];
}

function collect(events: Record<string, unknown>[]): ResourceStep[] {
  const c = new StepCollector();
  for (const metadata of events)
    c.onEvent({ sequence: 0, timestamp: 0, resourcePreEvent: { metadata } } as never);
  return c.all();
}

describe("environment stack summary", () => {
  it("replays a real engine event: the settings ConfigMap updated in place is a proxy-settings hop, its rules in the exposure", () => {
    // Recorded from Pulumi 3.259's preview of a local environment stack gaining app cluster
    // app-2 (test/e2e/network-preview-stack.test.ts): a detailed diff says `diffKind`.
    const event = JSON.parse(
      fs.readFileSync(path.join(__dirname, "fixtures", "settings-configmap-update.event.json"), "utf8"),
    ) as EngineEvent;
    const c = new StepCollector();
    c.onEvent(event);
    const [step] = c.all();
    assert.equal(step?.op, "update");
    assert.deepEqual(step?.diffPaths, ['data["settings.json"]']);
    const input = environmentInput("preview-e2e", c.all());
    assert.deepEqual(
      input.otherChanges?.map((h) => [h.kind, h.op]),
      [["proxy-settings", "update"]],
    );
    assert.deepEqual(
      input.exposure?.after.map((r) => r.via?.endsWith("local-bridge-settings-configmap")),
      [true, true],
      "one rule per consumer namespace after the change (app-1 and app-2)",
    );
    assert.equal(input.exposure?.before.length, 1);
  });

  it("a security group rule opened to 0.0.0.0/0 is widened: grade 5, with the CIDR change as detail", () => {
    const steps = collect([
      {
        op: "update",
        urn: sgUrn,
        type: SG,
        old: { inputs: rule("10.10.0.0/16") },
        new: { inputs: rule("0.0.0.0/0") },
        detailedDiff: { cidrIpv4: { diffKind: "update", inputDiff: true } },
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
    const steps = collect(routeReplaced(`urn:pulumi:aws-mock::klutch::${ROUTE}::app-1-to-data`));
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
        urn: `urn:x::klutch:bridge:BridgeSettings$${cm}::local-bridge-settings-configmap`,
        type: cm,
        old: { inputs: { metadata: SETTINGS_META, data: { "settings.json": settings(30000) } } },
        new: { inputs: { metadata: SETTINGS_META, data: { "settings.json": settings(31000) } } },
      },
    ]);
    const input = environmentInput("local", steps);
    const details = (input.otherChanges ?? []).map((h) => `${h.kind}: ${h.detail ?? ""}`);
    assert.deepEqual(details.sort(), [
      "app-cluster: app cluster binding app-2 removed",
      "app-cluster: app cluster binding app-3 added",
      "proxy-settings: port ranges klutch-app-1 proxy 30000-30099 → klutch-app-1 proxy 31000-31099",
    ]);
    assert.match(input.notes?.[0] ?? "", /--all-groups/);
    // The proxy's source ranges stay the same, only the ports move: not widened, but changed.
    const report = buildReport(input);
    assert.equal(report.exposure.widened.length, 0);
    assert.equal(report.exposure.added.length, 1);
  });

  describe("a routed app cluster's planned reach (security group ports and routes)", () => {
    const vpc = "klutch:network:VpcPeering";
    const settings = renderBridgeSettings({
      version: 1,
      consumers: { "klutch-app-1": { appCluster: "app-1", implementation: "awsVpcPeering" } },
    });
    const sgRule = (port: number) => ({
      securityGroupId: "sg-0data",
      ipProtocol: "tcp",
      fromPort: port,
      toPort: port,
      cidrIpv4: "10.20.0.0/16",
    });
    const peeringUrn = (type: string, name: string) =>
      `urn:pulumi:aws-mock::klutch::klutch:index:Environment$${vpc}$${type}::${name}`;
    // dataServicePorts [5432, 6379] → [5432]: the 6379 rule is deleted, the rest stays.
    const steps = collect([
      {
        op: "same",
        urn: `urn:x::klutch:bridge:BridgeSettings$${"kubernetes:core/v1:ConfigMap"}::aws-mock-bridge-settings-configmap`,
        type: "kubernetes:core/v1:ConfigMap",
        old: { inputs: { metadata: SETTINGS_META, data: { "settings.json": settings } } },
        new: { inputs: { metadata: SETTINGS_META, data: { "settings.json": settings } } },
      },
      {
        op: "same",
        urn: peeringUrn(SG, "aws-mock-app-1-peering-tcp-5432-10-20-0-0-16"),
        type: SG,
        old: { inputs: sgRule(5432) },
        new: { inputs: sgRule(5432) },
      },
      {
        op: "delete",
        urn: peeringUrn(SG, "aws-mock-app-1-peering-tcp-6379-10-20-0-0-16"),
        type: SG,
        old: { inputs: sgRule(6379) },
      },
      {
        op: "same",
        urn: peeringUrn(ROUTE, "aws-mock-app-1-peering-accepter-rtb-0data-10-20-0-0-16"),
        type: ROUTE,
        old: { inputs: { destinationCidrBlock: "10.20.0.0/16" } },
        new: { inputs: { destinationCidrBlock: "10.20.0.0/16" } },
      },
      {
        op: "same",
        urn: peeringUrn(ROUTE, "aws-mock-app-1-peering-requester-rtb-0app-10-10-0-0-17"),
        type: ROUTE,
        old: { inputs: { destinationCidrBlock: "10.10.0.0/17" } },
        new: { inputs: { destinationCidrBlock: "10.10.0.0/17" } },
      },
    ]);
    const connection = (id: string, host: string, port: number): ConnectionInput => ({
      id,
      change: "keep",
      implementation: "awsVpcPeering",
      consumer: { namespace: "klutch-app-1" },
      instance: { host, port },
      before: { host, port },
      after: { host, port },
      hops: [],
    });

    it("reads the ports the remaining rules admit and where the routes lead, per consumer namespace", () => {
      assert.deepEqual(routedReach(steps, consumerNamespaces(steps)), [
        {
          appCluster: "app-1",
          namespace: "klutch-app-1",
          ports: [{ from: 5432, to: 5432 }],
          routes: ["10.10.0.0/17"],
        },
      ]);
    });

    it("a connection whose port loses its rule, or whose host no route reaches, is broken (exit 5), naming the fix", () => {
      const reach = routedReach(steps, consumerNamespaces(steps));
      const marked = markUnreachable(
        [
          connection("orders", "10.10.0.20", 5432),
          connection("cache", "10.10.0.21", 6379),
          connection("elsewhere", "10.99.0.5", 5432),
          // Not routed: the proxy's own reach is the bridge's concern.
          { ...connection("proxied", "10.10.0.22", 6379), implementation: "proxy" },
        ],
        reach,
      );
      const report = buildReport({ sources: [], connections: marked });
      const risk = Object.fromEntries(report.connections.map((c) => [c.id, [c.risk, c.reasons.join("; ")]]));
      assert.deepEqual(risk.orders?.[0], "none");
      assert.deepEqual(risk.proxied?.[0], "none");
      assert.equal(risk.cache?.[0], "broken");
      assert.match(
        risk.cache?.[1] ?? "",
        /no planned security group rule of app cluster app-1 admits TCP 6379 \(it admits 5432\): add 6379 to its networkConnector\.dataServicePorts/,
      );
      assert.equal(risk.elsewhere?.[0], "broken");
      assert.match(
        risk.elsewhere?.[1] ?? "",
        /no planned route of app cluster app-1 leads to 10\.99\.0\.5 \(its routes lead to 10\.10\.0\.0\/17\)/,
      );
      assert.equal(report.summary.grade, 5);
    });

    it("a namespace with no routed path resources is not judged", () => {
      assert.deepEqual(unreachableReasons(connection("x", "10.99.0.5", 1), []), []);
    });
  });

  it("changedInputs names the top-level inputs that differ", () => {
    assert.deepEqual(changedInputs({ a: 1, b: [1], c: "x" }, { a: 1, b: [2], d: true }), ["b", "c", "d"]);
    assert.deepEqual(changedInputs(undefined, { a: 1 }), []);
  });
});

const CM = "kubernetes:core/v1:ConfigMap";
const settingsUrn = `urn:pulumi:local::klutch::klutch:index:Environment$klutch:bridge:BridgeSettings$${CM}::local-bridge-settings-configmap`;
const twoApps = (app2: "proxy" | "wireguard", withApp2 = true) =>
  renderBridgeSettings({
    version: 1,
    consumers: {
      "cluster-app-1": { appCluster: "app-1", implementation: "proxy" },
      ...(withApp2 ? { "cluster-app-2": { appCluster: "app-2", implementation: app2 } } : {}),
    },
  });
const settingsStep = (op: string, before: string, after: string) => ({
  op,
  urn: settingsUrn,
  type: CM,
  old: { inputs: { metadata: SETTINGS_META, data: { "settings.json": before } } },
  new: { inputs: { metadata: SETTINGS_META, data: { "settings.json": after } } },
});
/** A connection as the connection preview reports it, consumed in `namespace`. */
const conn = (
  id: string,
  namespace: string,
  change: ConnectionInput["change"] = "keep",
): ConnectionInput => ({
  id,
  change,
  implementation: "proxy",
  consumer: { namespace },
  instance: { host: "127.0.0.1", port: 5432 },
  before: { host: "127.0.0.1", port: 22003 },
  after: { host: "127.0.0.1", port: 22003 },
  hops: [],
});

describe("environment changes linked to the connections they reach", () => {
  it("an app cluster removed: its consumer namespace's connections are removed and counted in the blast radius", () => {
    const nsType = "kubernetes:core/v1:Namespace";
    const steps = collect([
      {
        op: "delete",
        urn: `urn:pulumi:local::klutch::klutch:index:Environment$klutch:bind:AppClusterBinding$${nsType}::app-2-consumer-namespace`,
        type: nsType,
        old: {
          inputs: {
            metadata: { name: "cluster-app-2", labels: { "klutch.anynines.com/app-cluster": "app-2" } },
          },
        },
      },
      settingsStep("update", twoApps("proxy"), twoApps("proxy", false)),
    ]);
    const env = environmentInput("local", steps);
    assert.deepEqual(removedNamespaces(env), ["cluster-app-2"]);
    const report = buildReport({
      ...env,
      connections: [conn("billing-x", "cluster-app-2", "delete"), conn("orders-y", "cluster-app-1")],
    });
    const billing = report.connections.find((c) => c.id === "billing-x");
    assert.equal(billing?.risk, "removed");
    assert.equal(billing?.consumer.cluster, "app-2");
    assert.match(
      billing?.reasons[0] ?? "",
      /app cluster app-2 is removed: its consumer namespace cluster-app-2/,
    );
    assert.equal(report.connections.find((c) => c.id === "orders-y")?.risk, "none");
    const blast = report.blastRadius.find((b) => b.kind === "app-cluster");
    assert.deepEqual(
      [blast?.op, blast?.connections, blast?.namespaces, blast?.clusters],
      ["delete", 1, 1, 1],
    );
    // Linked hops are shown with their connections, not as "other changes".
    assert.ok(!report.otherChanges.some((h) => h.kind === "app-cluster"));
    assert.equal(report.summary.grade, 3);
  });

  it("the planned groups of a removed namespace lose every path (the bridge's programs then preview the deletion)", () => {
    const path = (name: string, ns: string) =>
      networkPath(name, {
        spec: { connection: name, consumerNamespace: ns, instanceHost: "h", port: 1 },
        status: { observedGeneration: 1 },
      });
    const groups = planGroups(
      { paths: [path("a", "cluster-app-1"), path("b", "cluster-app-2")], claimXr: new Map() },
      [],
      false,
      false,
      { removed: ["cluster-app-2"], affected: ["cluster-app-2"] },
    );
    assert.deepEqual(
      groups.map((g) => [g.key, g.after.length, [...g.deletedIds]]),
      [["cluster-app-2/proxy", 0, ["b"]]],
    );
  });

  it("an app cluster's connector implementation changed: its connections are unknown, with the change as reason", () => {
    const env = environmentInput(
      "local",
      collect([settingsStep("update", twoApps("proxy"), twoApps("wireguard"))]),
    );
    const report = buildReport({ ...env, connections: [conn("billing-x", "cluster-app-2")] });
    const billing = report.connections[0];
    assert.equal(billing?.risk, "unknown");
    assert.match(billing?.reasons.join(";") ?? "", /app-2's connector changes proxy → wireguard/);
    assert.equal(billing?.hops[0]?.kind, "proxy-settings");
    assert.equal(report.summary.grade, 4);
  });

  it("a peering route of an app cluster replaced delete-first: an interruption of that cluster's connections only", () => {
    const steps = collect([
      settingsStep("same", twoApps("proxy"), twoApps("proxy")),
      ...routeReplaced(
        `urn:pulumi:aws-mock::klutch::klutch:network:VpcPeering$${ROUTE}::aws-mock-app-1-peering-to-data`,
      ),
    ]);
    const report = buildReport({
      ...environmentInput("aws-mock", steps),
      connections: [conn("a", "cluster-app-1"), conn("b", "cluster-app-2")],
    });
    const [a, b] = report.connections;
    assert.equal(a?.risk, "interruption");
    assert.match(a?.reasons.join(";") ?? "", /deleting first \(destinationCidrBlock\)/);
    assert.equal(b?.risk, "none");
    assert.equal(report.summary.grade, 4);
    assert.equal(report.blastRadius[0]?.kind, "peering-route");
  });
});

describe("policy results and the cost estimate", () => {
  it("CrossGuard's policy events are the report's policy; a mandatory one grades 5", () => {
    const c = new StepCollector();
    c.onEvent({
      sequence: 1,
      timestamp: 0,
      policyEvent: {
        resourceUrn: "urn:pulumi:local::klutch::kubernetes:core/v1:Service::gw",
        message: "Service gw is a load balancer open to the internet (no source ranges)\n",
        color: "never",
        policyName: "klutch-no-world-open-load-balancer",
        policyPackName: "klutch-network-safety",
        policyPackVersion: "0.1.0",
        policyPackVersionTag: "0.1.0",
        enforcementLevel: "mandatory",
      },
    });
    assert.deepEqual(c.policy, [
      {
        policy: "klutch-no-world-open-load-balancer",
        enforcement: "mandatory",
        message: "Service gw is a load balancer open to the internet (no source ranges)",
        urn: "urn:pulumi:local::klutch::kubernetes:core/v1:Service::gw",
      },
    ]);
    const report = buildReport({ sources: [], connections: [], policy: c.policy });
    assert.equal(report.summary.grade, 5);
    assert.match(report.summary.line, /1 policy violation;/);
    const advisory = buildReport({
      sources: [],
      connections: [],
      policy: [{ ...c.policy[0]!, enforcement: "advisory" }],
    });
    assert.equal(advisory.summary.grade, 0);
  });

  it("AWS: a NAT gateway and its EIP added cost +$36.50/month; OpenStack: a floating IP deleted −$2.00; a LoadBalancer Service is unpriced", () => {
    const aws = collect([
      {
        op: "create",
        urn: "urn:pulumi:aws-mock::klutch::aws:ec2/natGateway:NatGateway::nat",
        type: "aws:ec2/natGateway:NatGateway",
        new: { inputs: {} },
      },
      {
        op: "create",
        urn: "urn:pulumi:aws-mock::klutch::aws:ec2/eip:Eip::nat-ip",
        type: "aws:ec2/eip:Eip",
        new: { inputs: {} },
      },
      {
        op: "update",
        urn: "urn:pulumi:aws-mock::klutch::aws:ec2/eip:Eip::other",
        type: "aws:ec2/eip:Eip",
        old: { inputs: {} },
        new: { inputs: { tags: {} } },
      },
      {
        op: "create",
        urn: "urn:pulumi:aws-mock::klutch::kubernetes:core/v1:Service::gw",
        type: "kubernetes:core/v1:Service",
        new: { inputs: { spec: { type: "LoadBalancer" } } },
      },
    ]);
    const a = buildReport(environmentInput("aws-mock", aws)).cost;
    assert.equal(a.estimated, true);
    assert.deepEqual(
      a.items.map((i) => [i.type, i.monthlyUsd]),
      [
        ["aws:ec2/eip:Eip", 3.65],
        ["aws:ec2/natGateway:NatGateway", 32.85],
      ],
    );
    assert.equal(a.monthlyDeltaUsd, 36.5);
    assert.match(a.items[1]?.source ?? "", /aws\.amazon\.com\/vpc\/pricing.*as of \d{4}-\d\d-\d\d/);
    assert.deepEqual(
      a.unpriced.map((u) => u.type),
      ["kubernetes:core/v1:Service"],
    );
    const os = collect([
      {
        op: "delete",
        urn: "urn:pulumi:os-mock::klutch::openstack:networking/floatingIp:FloatingIp::gw-ip",
        type: "openstack:networking/floatingIp:FloatingIp",
        old: { inputs: {} },
      },
    ]);
    const o = buildReport(environmentInput("openstack-mock", os));
    assert.equal(o.cost.monthlyDeltaUsd, -2);
    assert.match(renderMarkdownOf(o), /Cost estimate: −\$2\.00\/month/);
  });

  it("per GB: a NAT gateway and a peering added list what traffic through them costs; totals only for an assumed volume", () => {
    const steps = collect([
      {
        op: "create",
        urn: "urn:pulumi:aws-mock::klutch::aws:ec2/natGateway:NatGateway::nat",
        type: "aws:ec2/natGateway:NatGateway",
        new: { inputs: {} },
      },
      {
        op: "create",
        urn: "urn:pulumi:aws-mock::klutch::aws:ec2/vpcPeeringConnection:VpcPeeringConnection::peer",
        type: "aws:ec2/vpcPeeringConnection:VpcPeeringConnection",
        new: { inputs: {} },
      },
      {
        op: "delete",
        urn: "urn:pulumi:aws-mock::klutch::aws:lb/loadBalancer:LoadBalancer::old-nlb",
        type: "aws:lb/loadBalancer:LoadBalancer",
        old: { inputs: {} },
      },
    ]);
    const report = buildReport(environmentInput("aws-mock", steps));
    const traffic = report.cost.traffic;
    assert.deepEqual(
      traffic?.items.map((i) => [i.type, i.usdPerGb, i.monthlyUsd]),
      [
        ["aws:ec2/natGateway:NatGateway", 0.045, undefined],
        ["aws:ec2/vpcPeeringConnection:VpcPeeringConnection", 0.01, undefined],
        ["aws:lb/loadBalancer:LoadBalancer", -0.006, undefined],
      ],
    );
    assert.equal(traffic?.monthlyDeltaUsd, undefined, "no volume assumed: no total");
    assert.match(renderMarkdownOf(report), /plus \+\$0\.045 \+\$0\.01 −\$0\.006 per GB of traffic/);

    const assumed = { ...report, cost: withTraffic(report.cost, 500) };
    assert.deepEqual(
      assumed.cost.traffic?.items.map((i) => i.monthlyUsd),
      [22.5, 5, -3],
    );
    assert.equal(assumed.cost.traffic?.monthlyDeltaUsd, 24.5);
    assert.equal(assumed.cost.traffic?.gbPerMonth, 500);
    assert.equal(
      assumed.cost.monthlyDeltaUsd,
      report.cost.monthlyDeltaUsd,
      "the hourly part stays as it was",
    );
    const md = renderMarkdownOf(assumed);
    assert.match(md, /traffic \+\$24\.50\/month at 500 GB/);
    assert.match(md, /\+\$0\.045\/GB × 500 GB = \+\$22\.50/);
    assert.doesNotThrow(() => reportSchema.parse(assumed));
  });
});
