import type { Hop } from "./schema";
import type { PreviewInput } from "./model";
import { estimateCost, withTraffic } from "./cost";

/**
 * Scenario inputs for the unit tests and their golden files: what programs/network-preview/ gathers
 * from engine previews, written out by hand. Their URNs follow the bridge's group stacks
 * (project klutch-network-paths) and the environment stack (project klutch).
 */

const urn = (stack: string, type: string, name: string) =>
  `urn:pulumi:${stack}::klutch-network-paths::${type}::${name}`;

export const portsHop = (stack: string, op: Hop["op"], detail: string, diffPaths: string[]): Hop => ({
  kind: "proxy-port",
  op,
  urn: urn(stack, "pulumi-nodejs:dynamic/klutch:PortAllocation", "ports"),
  type: "klutch:PortAllocation",
  diffPaths,
  detail,
});

export const haproxyHop = (stack: string, op: Hop["op"], extra: Partial<Hop> = {}): Hop => ({
  kind: "proxy-frontend",
  op,
  urn: urn(stack, "pulumi-nodejs:dynamic/klutch:LocalHaproxy", "haproxy"),
  type: "klutch:LocalHaproxy",
  diffPaths: op === "same" ? [] : ["config"],
  ...extra,
});

const connectionsSource = { kind: "connections" as const, ref: "pending.yaml" };

/** A pending TCPConnection file adds one connection to an existing group. */
export const addedScenario: PreviewInput = {
  sources: [connectionsSource],
  connections: [
    {
      id: "orders-x7k2p-4hv9c",
      change: "keep",
      implementation: "proxy",
      consumer: { namespace: "team-a" },
      instance: { host: "10.0.0.5", port: 5432 },
      before: { host: "127.0.0.1", port: 42000 },
      after: { host: "127.0.0.1", port: 42000 },
      hops: [
        portsHop("np-team-a-proxy", "update", "ids +1", ["ids"]),
        haproxyHop("np-team-a-proxy", "update"),
      ],
    },
    {
      id: "pending:team-a/billing",
      change: "add",
      implementation: "proxy",
      consumer: { namespace: "team-a" },
      instance: { host: "10.0.0.6", port: 5432 },
      after: { host: "127.0.0.1", port: 42003 },
      hops: [
        portsHop("np-team-a-proxy", "update", "ids +1", ["ids"]),
        haproxyHop("np-team-a-proxy", "update"),
      ],
    },
  ],
  ports: [
    {
      group: "team-a/proxy",
      rangeBefore: { from: 42000, to: 42049 },
      rangeAfter: { from: 42000, to: 42049 },
      before: { "orders-x7k2p-4hv9c": 42000, "~health": 42002, "~stats": 42001 },
      after: {
        "orders-x7k2p-4hv9c": 42000,
        "pending:team-a/billing": 42003,
        "~health": 42002,
        "~stats": 42001,
      },
      ownPorts: 2,
    },
  ],
};

/** The bridge's port range moves: every existing port moves with it. */
export const rangeMovedScenario: PreviewInput = {
  sources: [connectionsSource],
  connections: ["orders", "payments"].map((name, i) => ({
    id: `${name}-abcde-fghij`,
    change: "keep" as const,
    implementation: "proxy",
    consumer: { namespace: "team-a" },
    instance: { host: "10.0.0.5", port: 5432 + i },
    before: { host: "127.0.0.1", port: 42000 + i },
    after: { host: "127.0.0.1", port: 42100 + i },
    hops: [
      portsHop("np-team-a-proxy", "update", "range 42000-42049 → 42100-42149", ["range"]),
      haproxyHop("np-team-a-proxy", "update"),
    ],
  })),
  ports: [
    {
      group: "team-a/proxy",
      rangeBefore: { from: 42000, to: 42049 },
      rangeAfter: { from: 42100, to: 42149 },
      before: {
        "orders-abcde-fghij": 42000,
        "payments-abcde-fghij": 42001,
        "~health": 42003,
        "~stats": 42002,
      },
      after: {
        "orders-abcde-fghij": 42100,
        "payments-abcde-fghij": 42101,
        "~health": 42103,
        "~stats": 42102,
      },
      ownPorts: 2,
    },
  ],
};

const sgUrn =
  "urn:pulumi:aws-mock::klutch::klutch:network:VpcPeering$aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule::data-pg-from-app-1";
const routeUrn = "urn:pulumi:aws-mock::klutch::klutch:network:VpcPeering$aws:ec2/route:Route::app-1-to-data";

/** AWS: the data services' security group opened to 0.0.0.0/0, a peering route replaced. */
export const awsWidenedScenario: PreviewInput = {
  sources: [{ kind: "environment", ref: "aws-mock" }],
  connections: [
    {
      id: "orders-abcde-fghij",
      change: "keep",
      implementation: "awsVpcPeering",
      consumer: { namespace: "team-a", cluster: "app-1" },
      instance: { host: "10.20.1.15", port: 5432 },
      before: { host: "10.20.1.15", port: 5432 },
      after: { host: "10.20.1.15", port: 5432 },
      hops: [
        {
          kind: "security-group-rule",
          op: "update",
          urn: sgUrn,
          type: "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
          diffPaths: ["cidrIpv4"],
          detail: "10.10.0.0/16 → 0.0.0.0/0",
        },
        {
          kind: "peering-route",
          op: "replace",
          urn: routeUrn,
          type: "aws:ec2/route:Route",
          diffPaths: ["destinationCidrBlock"],
          replaceReasons: ["destinationCidrBlock"],
          deleteBeforeReplace: true,
        },
      ],
    },
  ],
  exposure: {
    before: [
      {
        source: "10.10.0.0/16",
        destination: "sg-data",
        protocol: "tcp",
        ports: { from: 5432, to: 5432 },
        via: sgUrn,
      },
    ],
    after: [
      {
        source: "0.0.0.0/0",
        destination: "sg-data",
        protocol: "tcp",
        ports: { from: 5432, to: 5432 },
        via: sgUrn,
      },
    ],
  },
  policy: [
    {
      policy: "no-public-data-service-ports",
      enforcement: "advisory",
      message: "security group rule opens 5432 to 0.0.0.0/0",
      urn: sgUrn,
    },
  ],
  // The same change adds a NAT gateway with its address; 500 GB a month assumed through it.
  cost: withTraffic(
    estimateCost([
      {
        urn: "urn:pulumi:aws-mock::klutch::aws:ec2/natGateway:NatGateway::app-1-nat",
        type: "aws:ec2/natGateway:NatGateway",
        op: "create",
      },
      {
        urn: "urn:pulumi:aws-mock::klutch::aws:ec2/eip:Eip::app-1-nat-ip",
        type: "aws:ec2/eip:Eip",
        op: "create",
      },
    ]),
    500,
  ),
};

/** An app cluster removed: its connections go, the shared peering with it. */
export const removedScenario: PreviewInput = {
  sources: [{ kind: "environment", ref: "local" }],
  connections: ["orders", "billing", "search"].map((name, i) => ({
    id: `${name}-abcde-fghij`,
    change: "delete" as const,
    implementation: "wireguard",
    consumer: { namespace: i === 2 ? "team-b" : "team-a", cluster: "app-2" },
    instance: { host: `10.0.0.${5 + i}`, port: 5432 },
    before: { host: `10.0.0.${5 + i}`, port: 5432 },
    hops: [
      {
        kind: "wireguard-peer" as const,
        op: "delete" as const,
        urn: "urn:pulumi:local::klutch::klutch:network:WireguardTunnel$klutch:WireGuardPeer::app-2",
        type: "klutch:WireGuardPeer",
        diffPaths: [],
      },
    ],
  })),
};
