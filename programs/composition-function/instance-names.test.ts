import { strict as assert } from "node:assert";
import type { NetworkConnectionsInput } from "./input.js";
import { inZones, instanceNamesOf } from "./instance-names.js";
import { composeNetworkConnection } from "./network-connection.js";
import { composeNetworkConnections } from "./network-connections.js";
import { bindingComposite, bytes, observedConnection, text, type Json } from "./test-helpers.js";
import type { ObservedResource } from "./step.js";

const ZONE = "a9s.internal";
const INPUT: NetworkConnectionsInput = {
  kind: "NetworkConnections",
  credentialsFrom: "a9s-servicebinding",
  implementation: "proxy",
  instanceZones: [ZONE],
};
const composite = (type: string) =>
  bindingComposite("b-x7k2p", "b", "uid-1", { instanceRef: "i", serviceInstanceType: type });
const binding = (creds: Record<string, string>): Record<string, ObservedResource> => ({
  "a9s-servicebinding": { resource: { kind: "ServiceBinding" }, connectionDetails: bytes(creds) },
});
const READY = { type: "Ready", status: "True", reason: "Available" };
const connection = (
  host: string,
  port: number,
  address = "10.0.0.5",
  ready: Json = READY,
): ObservedResource => observedConnection(host, port, ready, address);
// a9s PostgreSQL's keys (services/postgresql/credentials.test.ts), with TLS's cacrt.
const PG = {
  host: "pg-0.a9s.internal",
  hosts: "[pg-0.a9s.internal]",
  port: "5432",
  uri: "postgres://u:pw@pg-0.a9s.internal:5432/db",
  name: "db",
  username: "u",
  password: "pw",
  cacrt: "-----BEGIN CERTIFICATE-----",
};

describe("composition function: instance names (a host in a zone keeps its name)", () => {
  it("matches a zone and names under it, ignoring case and the root's dot, never a mere suffix", () => {
    assert.ok(inZones("PG-0.A9S.internal.", ["a9s.internal"]));
    assert.ok(inZones("a9s.internal", ["a9s.internal"]));
    assert.ok(!inZones("pg-0.xa9s.internal", ["a9s.internal"]));
    assert.ok(!inZones("pg-0.a9s.internal", []));
  });

  it("keeps the instance's host in every key and URI, with the path's port, and publishes where the name resolves", () => {
    const out = composeNetworkConnections(
      composite("postgresql"),
      { ...binding(PG), "connection-sql": connection("pg-0.a9s.internal", 5432) },
      INPUT,
    );
    assert.equal(out.conditions[0]!.status, "True");
    assert.deepEqual(text(out.connectionDetails), {
      ...PG,
      port: "35432",
      uri: "postgres://u:pw@pg-0.a9s.internal:35432/db",
    });
    assert.deepEqual(out.compositePatch, {
      status: { managed: { instanceNames: [{ name: "pg-0.a9s.internal", address: "10.0.0.5" }] } },
    });
  });

  it("rewrites a host outside the zones as before, and keeps the one inside", () => {
    const out = composeNetworkConnections(
      composite("messaging"),
      {
        ...binding({
          http_api_uri: "https://u:pw@mq.elsewhere:15672/api/",
          "protocols.amqp_ssl.uri": "amqps://u:pw@mq-0.a9s.internal:5671",
        }),
        "connection-http-api": connection("mq.elsewhere", 15672, "np.app"),
        "connection-amqp-ssl": connection("mq-0.a9s.internal", 5671, "np.app"),
      },
      INPUT,
    );
    assert.deepEqual(text(out.connectionDetails), {
      http_api_uri: "https://u:pw@np.app:45672/api/",
      "protocols.amqp_ssl.uri": "amqps://u:pw@mq-0.a9s.internal:35671",
    });
    assert.deepEqual(out.compositePatch, {
      status: { managed: { instanceNames: [{ name: "mq-0.a9s.internal", address: "np.app" }] } },
    });
  });

  it("a host whose paths reach the app cluster at two addresses is no name: rewritten to each path", () => {
    const connections = [
      connection("mq-0.a9s.internal", 5671, "10.0.0.5").resource,
      connection("mq-0.a9s.internal", 15672, "10.0.0.6").resource,
      connection("other.a9s.internal", 1, "10.0.0.7", { type: "Ready", status: "False" }).resource,
    ];
    assert.deepEqual(instanceNamesOf(connections, [ZONE]), []);
  });

  it("while a path is not Ready, publishes the names of the Ready ones only; without zones, writes no names", () => {
    const observed = {
      ...binding({
        "protocols.amqp_ssl.uri": "amqps://u:pw@mq-0.a9s.internal:5671",
        http_api_uri: "https://u:pw@mq-1.a9s.internal:15672/",
      }),
      "connection-amqp-ssl": connection("mq-0.a9s.internal", 5671),
      "connection-http-api": connection("mq-1.a9s.internal", 15672, "x", { type: "Ready", status: "False" }),
    };
    const waiting = composeNetworkConnections(composite("messaging"), observed, INPUT);
    assert.equal(waiting.conditions[0]!.status, "False");
    assert.deepEqual(waiting.compositePatch, {
      status: { managed: { instanceNames: [{ name: "mq-0.a9s.internal", address: "10.0.0.5" }] } },
    });
    const plain = composeNetworkConnections(composite("messaging"), observed, {
      ...INPUT,
      instanceZones: [],
    });
    assert.equal(plain.compositePatch, undefined);
  });

  it("the single connection of an a8s binding: instance_service, host and uri keep the name, port the path's", () => {
    const host = "pg-0.ds.svc.cluster.local";
    const input = {
      kind: "NetworkConnection" as const,
      credentialsFrom: "credentials",
      hostKey: "instance_service",
      defaultPort: 5432,
      instanceZones: ["ds.svc.cluster.local"],
    };
    const observed = {
      credentials: {
        resource: { kind: "Object" },
        connectionDetails: bytes({
          instance_service: host,
          password: "pw",
          uri: `postgres://u:pw@${host}:5432/db`,
        }),
      },
      connection: connection(host, 5432, "10.0.0.5"),
    };
    const out = composeNetworkConnection(observed, input);
    assert.deepEqual(text(out.connectionDetails), {
      instance_service: host,
      host,
      port: "35432",
      password: "pw",
      uri: `postgres://u:pw@${host}:35432/db`,
    });
    assert.deepEqual(out.compositePatch, {
      status: { managed: { instanceNames: [{ name: host, address: "10.0.0.5" }] } },
    });
    assert.match(
      out.conditions[0]!.message!,
      /at 10\.0\.0\.5:35432 \(its own name pg-0\.ds\.svc\.cluster\.local resolves there\)/,
    );
    // Outside the zones: the path's address, as before, and no names.
    const plain = composeNetworkConnection(observed, { ...input, instanceZones: ["other.zone"] });
    assert.equal(text(plain.connectionDetails)!.host, "10.0.0.5");
    assert.deepEqual(plain.compositePatch, { status: { managed: { instanceNames: [] } } });
  });
});
