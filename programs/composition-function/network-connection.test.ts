import { strict as assert } from "node:assert";
import type { NetworkConnectionInput } from "./input.js";
import { composeNetworkConnection, parsePort, rewriteUri } from "./network-connection.js";
import type { ObservedResource } from "./step.js";

type Json = Record<string, any>;

const A8S: NetworkConnectionInput = {
  kind: "NetworkConnection",
  credentialsFrom: "credentials",
  hostKey: "instance_service",
  defaultPort: 5432,
};

const bytes = (o: Record<string, string>) =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, Buffer.from(v)]));
const text = (o: Readonly<Record<string, Buffer>> | undefined) =>
  o && Object.fromEntries(Object.entries(o).map(([k, v]) => [k, v.toString("utf8")]));

const A8S_CREDENTIALS = {
  username: "klutch_0123456789ab",
  password: "pw",
  database: "postgres",
  instance_service: "pg-pg.team-a.svc",
};

const credentials = (details: Record<string, string>): ObservedResource => ({
  resource: { apiVersion: "kubernetes.crossplane.io/v1alpha2", kind: "Object", metadata: { name: "b-1" } },
  connectionDetails: bytes(details),
});

const connection = (
  status: Json,
  spec: Json = { instanceHost: "pg-pg.team-a.svc", port: 5432 },
): ObservedResource => ({
  resource: {
    apiVersion: "klutch.anynines.com/v1",
    kind: "XTCPConnection",
    metadata: { name: "b-1-conn" },
    spec: { ...spec, compositionRef: { name: "xtcpconnections-proxy" } },
    status,
  },
  connectionDetails: {},
});
const READY = { type: "Ready", status: "True", reason: "Available" };

describe("composition function: network connection", () => {
  describe("rewriteUri", () => {
    it("replaces host and port, keeping scheme, userinfo, path, query and fragment", () => {
      assert.equal(
        rewriteUri("postgresql://u:p%40ss@pg.internal:5432/db?sslmode=disable#x", "consumer", 40001),
        "postgresql://u:p%40ss@consumer:40001/db?sslmode=disable#x",
      );
      assert.equal(rewriteUri("postgresql://pg.internal/db", "c", 1), "postgresql://c:1/db");
      assert.equal(rewriteUri("postgres://u@[fd00::1]:5432", "c", 2), "postgres://u@c:2");
      assert.equal(rewriteUri("postgres://u@h:5432/db", "fd00::7", 2), "postgres://u@[fd00::7]:2/db");
    });

    it("gives up on what is not one scheme://host:port", () => {
      assert.equal(rewriteUri("host=pg port=5432", "c", 1), undefined);
      assert.equal(rewriteUri("postgresql://u@h1:5432,h2:5432/db", "c", 1), undefined);
      assert.equal(rewriteUri("postgresql://u@/db", "c", 1), undefined);
      assert.equal(rewriteUri("postgresql://u@h:port/db", "c", 1), undefined);
    });
  });

  it("parsePort takes numbers and decimal strings in range only", () => {
    assert.deepEqual([5432, "5432", "0", 0, 65536, "54x", "", 1.5, undefined].map(parsePort), [
      5432,
      5432,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it("waits, composing nothing and publishing nothing, while the backend's credentials have no host", () => {
    const cases: Record<string, ObservedResource>[] = [
      {},
      { credentials: credentials({ username: "u", password: "p" }) },
    ];
    for (const observed of cases) {
      const out = composeNetworkConnection(observed, A8S);
      assert.deepEqual(out, {
        composed: [],
        compositeReady: false,
        connectionDetails: {},
        conditions: [
          {
            type: "ConnectionReady",
            status: "False",
            reason: "WaitingForCredentials",
            message:
              'waiting for the backend\'s credentials: composed resource "credentials" has no connection detail "instance_service" yet',
          },
        ],
        results: [],
      });
    }
  });

  it("keeps a connection composed earlier while the credentials are missing, rather than deleting it", () => {
    const out = composeNetworkConnection({ connection: connection({ conditions: [READY] }) }, A8S);
    assert.deepEqual(out.composed, [
      {
        name: "connection",
        resource: {
          apiVersion: "klutch.anynines.com/v1",
          kind: "XTCPConnection",
          spec: { instanceHost: "pg-pg.team-a.svc", port: 5432 },
        },
        ready: true,
      },
    ]);
    assert.deepEqual(out.connectionDetails, {});
    assert.equal(out.compositeReady, false);
  });

  it("a port key with a value that is no port: waits, with a warning", () => {
    const a9s: NetworkConnectionInput = { ...A8S, hostKey: "host", portKey: "port", defaultPort: undefined };
    delete (a9s as Json).defaultPort;
    const out = composeNetworkConnection({ credentials: credentials({ host: "h", port: "fivefour" }) }, a9s);
    assert.deepEqual(out.composed, []);
    assert.equal(out.conditions[0]!.reason, "InvalidCredentials");
    assert.match(out.results[0]!.message, /connection detail "port" is "fivefour", not a port number/);
    const missing = composeNetworkConnection({ credentials: credentials({ host: "h" }) }, a9s);
    assert.equal(missing.conditions[0]!.reason, "WaitingForCredentials");
    assert.match(
      missing.conditions[0]!.message!,
      /no connection detail "port" yet, and the input sets no defaultPort/,
    );
  });

  it("composes the XTCPConnection to the backend's host and default port; not ready, nothing published, no warning yet", () => {
    const out = composeNetworkConnection({ credentials: credentials(A8S_CREDENTIALS) }, A8S);
    assert.deepEqual(out, {
      composed: [
        {
          name: "connection",
          resource: {
            apiVersion: "klutch.anynines.com/v1",
            kind: "XTCPConnection",
            spec: { instanceHost: "pg-pg.team-a.svc", port: 5432 },
          },
          ready: false,
        },
      ],
      compositeReady: false,
      connectionDetails: {},
      conditions: [
        {
          type: "ConnectionReady",
          status: "False",
          reason: "ConnectionNotReady",
          message: "the connection to the instance was just requested; it is not Ready yet",
        },
      ],
      results: [],
    });
  });

  it("asks for the input's implementation, and takes the port from the credentials when the input names its key", () => {
    const out = composeNetworkConnection(
      { credentials: credentials({ host: "10.0.0.7", port: "6432" }) },
      { ...A8S, hostKey: "host", portKey: "port", implementation: "proxy" },
    );
    assert.deepEqual(out.composed[0]!.resource.spec, {
      instanceHost: "10.0.0.7",
      port: 6432,
      compositionRef: { name: "xtcpconnections-proxy" },
    });
  });

  it("an observed connection that is not Ready: its own message on the condition and in a warning, nothing published", () => {
    const failing = connection({
      conditions: [
        { type: "Ready", status: "False", reason: "Creating", message: "Unready resources: network-path" },
      ],
    });
    const out = composeNetworkConnection(
      { credentials: credentials(A8S_CREDENTIALS), connection: failing },
      A8S,
    );
    const message = "the connection to the instance is not Ready (Creating): Unready resources: network-path";
    assert.deepEqual(out.conditions, [
      { type: "ConnectionReady", status: "False", reason: "ConnectionNotReady", message },
    ]);
    assert.deepEqual(out.results, [{ severity: "Warning", message }]);
    assert.deepEqual(out.connectionDetails, {});
    assert.equal(out.compositeReady, false);
    assert.equal(out.composed[0]!.ready, false);

    const silent = composeNetworkConnection(
      { credentials: credentials(A8S_CREDENTIALS), connection: connection({}) },
      A8S,
    );
    assert.equal(silent.conditions[0]!.message, "the connection to the instance is not Ready yet");
  });

  it("a Ready connection: every backend key, plus host and port where the app cluster connects", () => {
    const out = composeNetworkConnection(
      {
        credentials: credentials(A8S_CREDENTIALS),
        connection: connection({
          hostForConsumer: "b-1.team-a.svc.cluster.local",
          port: 40001,
          conditions: [READY],
        }),
      },
      A8S,
    );
    assert.equal(out.composed[0]!.ready, true);
    assert.equal(out.compositeReady, undefined);
    // The backend's host key names the consumer's endpoint too, so an app reading it reaches the path.
    assert.deepEqual(text(out.connectionDetails), {
      ...A8S_CREDENTIALS,
      instance_service: "b-1.team-a.svc.cluster.local",
      host: "b-1.team-a.svc.cluster.local",
      port: "40001",
    });
    assert.deepEqual(out.conditions, [
      {
        type: "ConnectionReady",
        status: "True",
        reason: "ConnectionEstablished",
        message: "the app cluster reaches the instance at b-1.team-a.svc.cluster.local:40001",
      },
    ]);
    assert.deepEqual(out.results, []);
  });

  it("keeps the backend's bytes as they are", () => {
    const binary = Buffer.from([0xff, 0x00, 0xfe]);
    const observed = {
      credentials: {
        ...credentials(A8S_CREDENTIALS),
        connectionDetails: { ...bytes(A8S_CREDENTIALS), cert: binary },
      },
      connection: connection({ hostForConsumer: "c", port: 1, conditions: [READY] }),
    };
    assert.deepEqual(composeNetworkConnection(observed, A8S).connectionDetails!.cert, binary);
  });

  it("a Ready connection without hostForConsumer (NOOP): the instance's own host and port", () => {
    const out = composeNetworkConnection(
      { credentials: credentials(A8S_CREDENTIALS), connection: connection({ conditions: [READY] }) },
      A8S,
    );
    assert.deepEqual(text(out.connectionDetails), {
      ...A8S_CREDENTIALS,
      host: "pg-pg.team-a.svc",
      port: "5432",
    });
    assert.equal(out.conditions[0]!.status, "True");
  });

  it("a Ready connection with hostForConsumer but no port is not usable", () => {
    const out = composeNetworkConnection(
      {
        credentials: credentials(A8S_CREDENTIALS),
        connection: connection({ hostForConsumer: "c", conditions: [READY] }),
      },
      A8S,
    );
    assert.deepEqual(out.connectionDetails, {});
    assert.equal(out.conditions[0]!.reason, "ConnectionNotReady");
    assert.match(out.conditions[0]!.message!, /reports status\.hostForConsumer without a valid status\.port/);
  });

  it("rewrites the backend's uri to the consumer's host and port, and warns when it cannot", () => {
    const a9s = {
      host: "pg.internal",
      port: "5432",
      uri: "postgresql://u:p@pg.internal:5432/db",
      username: "u",
    };
    const input: NetworkConnectionInput = { ...A8S, hostKey: "host", portKey: "port" };
    const ready = connection({ hostForConsumer: "consumer", port: 40001, conditions: [READY] });
    const out = composeNetworkConnection({ credentials: credentials(a9s), connection: ready }, input);
    assert.deepEqual(text(out.connectionDetails), {
      host: "consumer",
      port: "40001",
      uri: "postgresql://u:p@consumer:40001/db",
      username: "u",
    });
    assert.deepEqual(out.results, []);

    const odd = composeNetworkConnection(
      { credentials: credentials({ ...a9s, uri: "host=pg.internal port=5432" }), connection: ready },
      input,
    );
    assert.equal(text(odd.connectionDetails)!.uri, "host=pg.internal port=5432");
    assert.equal(odd.results.length, 1);
    assert.equal(odd.results[0]!.severity, "Warning");
    assert.match(
      odd.results[0]!.message,
      /"uri" is not of the form scheme:\/\/user:password@host:port\/path/,
    );
    assert.equal(odd.conditions[0]!.status, "True");
  });
});
