import { strict as assert } from "node:assert";
import { CONNECTION_READY } from "./network-connection.js";
import { composeNetworkConnections, connectionNames } from "./network-connections.js";
import type { NetworkConnectionsInput } from "./input.js";
import { bindingComposite, bytes, observedConnection, text, type Json } from "./test-helpers.js";
import type { ObservedResource } from "./step.js";

const INPUT: NetworkConnectionsInput = {
  kind: "NetworkConnections",
  credentialsFrom: "a9s-servicebinding",
  implementation: "proxy",
};
const composite = (type = "messaging") =>
  bindingComposite("mq-x7k2p", "mq", "uid-1", { instanceRef: "rabbit", serviceInstanceType: type });

// a9s Messaging's credentials (services/messaging/credentials.test.ts): two endpoints.
const CREDS = {
  http_api_uri: "https://u:pw@hxxx.service:15672/api/",
  "protocols.amqp_ssl.uri": "amqps://u:pw@hxxx.service:5671",
  password: "pw",
};
const binding = (creds: Record<string, string> = CREDS): Record<string, ObservedResource> => ({
  "a9s-servicebinding": { resource: { kind: "ServiceBinding" }, connectionDetails: bytes(creds) },
});
const connection = (host: string, port: number, ready: Json): ObservedResource =>
  observedConnection(host, port, ready);
const READY = { type: "Ready", status: "True", reason: "Available" };
const UNREACHABLE = {
  type: "Ready",
  status: "False",
  reason: "InstanceUnreachable",
  message: "HAProxy's check of hxxx.service:5671 fails",
};

describe("composition function: network connections (one per endpoint)", () => {
  it("composes one XTCPConnection per endpoint, through the input's implementation, naming the instance's software, and publishes nothing yet", () => {
    const out = composeNetworkConnections(composite(), binding(), INPUT);
    const spec = (port: number) => ({
      instanceHost: "hxxx.service",
      port,
      enhancements: [{ InstanceType: "RabbitMQ" }],
      compositionRef: { name: "xtcpconnections-proxy" },
    });
    assert.deepEqual(
      out.composed.map((c) => [c.name, c.resource.spec]),
      [
        ["connection-http-api", spec(15672)],
        ["connection-amqp-ssl", spec(5671)],
      ],
    );
    assert.deepEqual(out.connectionDetails, {});
    assert.equal(out.compositeReady, false);
    assert.deepEqual(out.results, [], "just composed: no warning yet");
  });

  it("one endpoint not Ready: names it and its reason; the other keeps its connection; nothing is published", () => {
    const out = composeNetworkConnections(
      composite(),
      {
        ...binding(),
        "connection-http-api": connection("hxxx.service", 15672, READY),
        "connection-amqp-ssl": connection("hxxx.service", 5671, UNREACHABLE),
      },
      INPUT,
    );
    assert.deepEqual(
      out.composed.map((c) => [c.name, c.ready]),
      [
        ["connection-http-api", true],
        ["connection-amqp-ssl", false],
      ],
    );
    const c = out.conditions[0]!;
    assert.deepEqual([c.type, c.status, c.reason], [CONNECTION_READY, "False", "ConnectionNotReady"]);
    assert.equal(
      c.message,
      "1 of 2 connections not Ready: AMQP SSL endpoint hxxx.service:5671 (connection-amqp-ssl): the connection to the instance is not Ready (InstanceUnreachable): HAProxy's check of hxxx.service:5671 fails",
    );
    assert.deepEqual(out.connectionDetails, {});
    assert.equal(out.results.length, 1);
  });

  it("every connection Ready: publishes the credentials with each endpoint's path, Ready naming each", () => {
    const out = composeNetworkConnections(
      composite(),
      {
        ...binding(),
        "connection-http-api": connection("hxxx.service", 15672, READY),
        "connection-amqp-ssl": connection("hxxx.service", 5671, READY),
      },
      INPUT,
    );
    assert.deepEqual(text(out.connectionDetails), {
      http_api_uri: "https://u:pw@np.app:45672/api/",
      "protocols.amqp_ssl.uri": "amqps://u:pw@np.app:35671",
      password: "pw",
    });
    assert.deepEqual(
      [out.conditions[0]!.status, out.conditions[0]!.reason],
      ["True", "ConnectionEstablished"],
    );
    assert.match(
      out.conditions[0]!.message!,
      /each of the instance's 2 endpoints: HTTP API endpoint hxxx.service:15672 at np.app:45672; AMQP SSL/,
    );
    assert.equal(out.compositeReady, undefined);
  });

  it("releases the connection of an endpoint the credentials stop naming", () => {
    const out = composeNetworkConnections(
      composite(),
      {
        ...binding({ http_api_uri: CREDS.http_api_uri }),
        "connection-http-api": connection("hxxx.service", 15672, READY),
        "connection-amqp-ssl": connection("hxxx.service", 5671, READY),
      },
      INPUT,
    );
    assert.deepEqual(
      out.composed.map((c) => c.name),
      ["connection-http-api"],
    );
    assert.equal(out.conditions[0]!.status, "True");
  });

  it("keeps the connections it made while the credentials are missing or invalid", () => {
    const observed = { "connection-http-api": connection("hxxx.service", 15672, READY) };
    const missing = composeNetworkConnections(composite(), observed, INPUT);
    assert.deepEqual(
      missing.composed.map((c) => c.name),
      ["connection-http-api"],
    );
    assert.equal(missing.conditions[0]!.reason, "WaitingForCredentials");
    // Kept as it was composed: the InstanceType it carried stays (an old one without stays without).
    const composedWith = connection("hxxx.service", 15672, READY);
    (composedWith.resource.spec as Json).enhancements = [{ InstanceType: "RabbitMQ" }];
    const kept = composeNetworkConnections(
      composite("objectstore"),
      { "connection-http-api": composedWith },
      INPUT,
    );
    assert.deepEqual((kept.composed[0]!.resource.spec as Json).enhancements, [{ InstanceType: "RabbitMQ" }]);
    assert.equal((missing.composed[0]!.resource.spec as Json).enhancements, undefined);
    const invalid = composeNetworkConnections(
      composite(),
      { ...observed, ...binding({ http_api_uri: "https://u:pw@hxxx.service:99999/api/" }) },
      INPUT,
    );
    assert.equal(invalid.conditions[0]!.reason, "InvalidCredentials");
    assert.doesNotMatch(invalid.conditions[0]!.message!, /pw/, "a URI's password is never in a message");
    assert.deepEqual(
      invalid.composed.map((c) => c.name),
      ["connection-http-api"],
    );
  });

  it("refuses a service type whose credentials it cannot read", () => {
    const out = composeNetworkConnections(composite("objectstore"), binding(), INPUT);
    assert.equal(out.conditions[0]!.reason, "UnsupportedServiceType");
    assert.deepEqual(out.composed, []);
  });

  it("names connections by label, numbering more of one label", () => {
    const e = (label: string) => ({ label, host: "h", port: 1 });
    assert.deepEqual(connectionNames([e("MongoDB"), e("MongoDB"), e("Graphite Exporter"), e("MongoDB")]), [
      "connection-mongodb",
      "connection-mongodb-1",
      "connection-graphite-exporter",
      "connection-mongodb-2",
    ]);
  });
});
