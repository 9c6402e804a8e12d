import { strict as assert } from "node:assert";
import * as pulumi from "@pulumi/pulumi";
import type { Endpoint, NetworkPathObject, PathProblem } from "../../lib/bridge/model";
import type { Target } from "../proxy/bridge-program";
import { mockPulumi, settle, valueOf } from "../../test/helpers/mocks";
import { wireguardProgram } from "./bridge-program";
import { LOCAL_DATA_NETNS_ENV, localNames } from "./local-plan";

const LOCAL: Target = {
  kind: "local",
  stateDir: "/var/lib/klutch-bridge",
  bindAddress: "127.0.0.1",
  portRange: { from: 42000, to: 42049 },
};

function networkPath(name: string, host: string, port: number, statusPort?: number): NetworkPathObject {
  return {
    metadata: { name, generation: 1 },
    spec: {
      implementation: "wireguard",
      connection: `xr-${name}`,
      consumerNamespace: "team-a",
      instanceHost: host,
      port,
    },
    ...(statusPort ? { status: { hostForConsumer: "127.0.0.1", port: statusPort } } : {}),
  };
}

async function run(
  paths: NetworkPathObject[],
  netns: string | undefined,
  options: Parameters<typeof mockPulumi>[2] = {},
) {
  const before = process.env[LOCAL_DATA_NETNS_ENV];
  if (netns === undefined) delete process.env[LOCAL_DATA_NETNS_ENV];
  else process.env[LOCAL_DATA_NETNS_ENV] = netns;
  try {
    const mocked = mockPulumi({}, "test", options);
    const outputs = await wireguardProgram("team-a/wireguard", paths, LOCAL)();
    const endpoints = await valueOf(outputs.endpoints as pulumi.Output<Record<string, Endpoint>>);
    const problems = await valueOf(
      pulumi.output(outputs.problems) as pulumi.Output<Record<string, PathProblem>>,
    );
    await settle();
    return { mocked, endpoints, problems };
  } finally {
    if (before === undefined) delete process.env[LOCAL_DATA_NETNS_ENV];
    else process.env[LOCAL_DATA_NETNS_ENV] = before;
  }
}

describe("WireGuard bridge program, local target (mocks)", function () {
  this.timeout(30000);

  it("one client, one allowed-hosts resource and a forwarder per good connection; a bad one is reported alone", async () => {
    const { mocked, endpoints, problems } = await run(
      [
        networkPath("orders", "198.51.100.10", 5432),
        networkPath("reports", "198.51.100.11", 5432),
        networkPath("by-name", "db.example.test", 5432),
      ],
      "kwds-test",
    );
    const types = mocked.resources.map((r) => r.type.replace("pulumi-nodejs:dynamic/klutch:", "")).sort();
    assert.deepEqual(types, [
      "LocalTcpForwarder",
      "LocalTcpForwarder",
      "LocalWireguardAllowedHosts",
      "LocalWireguardClient",
      "WireguardKeyPair",
    ]);
    // hostForConsumer:port is the forwarder on the app side, never the instance.
    assert.deepEqual(endpoints, {
      orders: { hostForConsumer: "127.0.0.1", port: 5432 },
      reports: { hostForConsumer: "127.0.0.1", port: 20000 },
    });
    assert.deepEqual(Object.keys(problems), ["by-name"]);
    assert.equal(problems["by-name"]!.reason, "InvalidConnection");
    assert.match(problems["by-name"]!.message, /must be an IPv4 address/);
    const client = mocked.ofType("pulumi-nodejs:dynamic/klutch:LocalWireguardClient")[0]!;
    assert.equal(client.inputs.netns, localNames("team-a/wireguard").netns);
    assert.equal(client.inputs.dataNetns, "kwds-test");
    assert.equal(client.inputs.gatewayDir, "/var/lib/klutch-bridge/wireguard/kwds-test");
  });

  it("a forwarder that does not listen is its own path's problem; the others keep their endpoints", async () => {
    const failure =
      "the forwarder 127.0.0.1:20000 in kwc-x does not listen (Address already in use); stop it";
    // The forwarder's provider as it reports a failed start: in its state, not thrown.
    const forwarder: pulumi.dynamic.ResourceProvider = {
      create: (inputs: { name: string }) =>
        Promise.resolve({
          id: inputs.name,
          outs: { ...inputs, ...(inputs.name === "reports" ? { failure } : {}) },
        }),
    };
    const { endpoints, problems } = await run(
      [networkPath("orders", "198.51.100.10", 5432), networkPath("reports", "198.51.100.11", 5432)],
      "kwds-test",
      { dynamicProviders: { "pulumi-nodejs:dynamic/klutch:LocalTcpForwarder": forwarder } },
    );
    assert.deepEqual(endpoints, { orders: { hostForConsumer: "127.0.0.1", port: 5432 } });
    assert.deepEqual(problems, { reports: { reason: "ForwarderFailed", message: failure } });
  });

  it("keeps the ports paths report, whatever connection comes later", async () => {
    const { endpoints } = await run(
      [networkPath("a-new", "198.51.100.10", 5432), networkPath("m-old", "198.51.100.11", 5432, 5432)],
      "kwds-test",
    );
    assert.deepEqual(endpoints, {
      "a-new": { hostForConsumer: "127.0.0.1", port: 20000 },
      "m-old": { hostForConsumer: "127.0.0.1", port: 5432 },
    });
  });

  it("without the data-service namespace every path says what is missing, and nothing is built", async () => {
    const { mocked, endpoints, problems } = await run(
      [networkPath("orders", "198.51.100.10", 5432)],
      undefined,
    );
    assert.deepEqual(mocked.resources, []);
    assert.deepEqual(endpoints, {});
    assert.match(problems.orders!.message, new RegExp(LOCAL_DATA_NETNS_ENV));
  });
});
