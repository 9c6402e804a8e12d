import { strict as assert } from "node:assert";
import * as pulumi from "@pulumi/pulumi";
import type { PathEndpoint, NetworkPathObject, PathProblem } from "../../lib/bridge/model";
import type { BridgeTarget as Target } from "../contract/bridge-target";
import { mockPulumi, settle, valueOf } from "../../test/helpers/mocks";
import { networkPath as pathOf } from "../../test/helpers/network-path";
import { wireguardProgram } from "./bridge-program";
import { parseClientConfig } from "./model/cluster-config";
import { CLUSTER_SETTINGS, clusterTarget } from "../../test/helpers/wireguard-fixtures";
import { LOCAL_DATA_NETNS_ENV, localNames } from "./model/local-plan";
import type { HostAddress } from "./model/host-addresses";

const LOCAL: Target = {
  kind: "local",
  stateDir: "/var/lib/klutch-bridge",
  bindAddress: "127.0.0.1",
  portRange: { from: 42000, to: 42049 },
};

const networkPath = (name: string, host: string, port: number, statusPort?: number): NetworkPathObject =>
  pathOf(name, {
    spec: { implementation: "wireguard", instanceHost: host, port },
    status: statusPort ? { hostForConsumer: "127.0.0.1", port: statusPort } : undefined,
  });

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
    const endpoints = await valueOf(outputs.endpoints as pulumi.Output<Record<string, PathEndpoint>>);
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

describe("WireGuard bridge program, kubernetes target (mocks)", function () {
  this.timeout(30000);

  const settings = CLUSTER_SETTINGS;
  const cluster = clusterTarget;

  /** The names a test's control plane resolves; any other is not found (no query leaves this machine). */
  const RESOLVED: Record<string, string> = { "pg.team-a.svc.cluster.local": "10.96.40.2" };
  const asked: string[] = [];
  const resolve = (name: string): Promise<HostAddress> => {
    asked.push(name);
    const address = RESOLVED[name];
    return Promise.resolve(address ? { address } : { problem: "ENOTFOUND" });
  };

  async function runCluster(paths: NetworkPathObject[], target: Target) {
    const mocked = mockPulumi({}, "test");
    const outputs = await wireguardProgram("team-a/wireguard", paths, target, resolve)();
    const endpoints = await valueOf(
      pulumi.output(outputs.endpoints) as pulumi.Output<Record<string, PathEndpoint>>,
    );
    const problems = await valueOf(
      pulumi.output(outputs.problems) as pulumi.Output<Record<string, PathProblem>>,
    );
    await settle();
    return { mocked, endpoints, problems };
  }

  it("publishes the group's flows and forwarder list as one patch of the gateway's flows ConfigMap; endpoints are the client's headless Service", async () => {
    const { mocked, endpoints, problems } = await runCluster(
      [
        networkPath("orders", "10.96.12.7", 5432),
        networkPath("reports", "10.244.0.9", 5432, 20000),
        networkPath("by-name", "db.example.test", 5432),
      ],
      cluster(settings),
    );
    // Nothing in any app cluster, no tunnel of its own: one provider, one patch.
    assert.deepEqual(mocked.resources.map((r) => r.type).sort(), [
      "kubernetes:core/v1:ConfigMapPatch",
      "pulumi:providers:kubernetes",
    ]);
    const patch = mocked.ofType("kubernetes:core/v1:ConfigMapPatch")[0]!;
    assert.equal(patch.inputs.metadata.name, "env-wireguard-gateway-flows");
    assert.equal(patch.inputs.metadata.namespace, "klutch-network");
    assert.match(
      patch.inputs.metadata.annotations["pulumi.com/patchFieldManager"],
      /^klutch-bridge-[0-9a-f]{16}$/,
    );
    assert.deepEqual(Object.keys(patch.inputs.data).sort(), [
      "client-100.96.0.2.conf",
      "flows-100.96.0.2.nft",
    ]);
    assert.deepEqual(parseClientConfig(patch.inputs.data["client-100.96.0.2.conf"]), [
      { listenPort: 5432, host: "10.96.12.7", port: 5432 },
      { listenPort: 20000, host: "10.244.0.9", port: 5432 },
    ]);
    assert.match(
      patch.inputs.data["flows-100.96.0.2.nft"],
      /flows \{ 100\.96\.0\.2 \. 10\.96\.12\.7 \. 5432, 100\.96\.0\.2 \. 10\.244\.0\.9 \. 5432 \}/,
    );
    assert.deepEqual(endpoints, {
      orders: { hostForConsumer: settings.clientHost, port: 5432 },
      reports: { hostForConsumer: settings.clientHost, port: 20000 },
    });
    assert.deepEqual(Object.keys(problems), ["by-name"]);
    assert.equal(problems["by-name"]!.reason, "HostUnresolved");
  });

  it("an instance host given by name (a Service's, as a binding's credentials give it) is published by the address it resolves to; one that does not resolve fails alone, saying so", async () => {
    asked.length = 0;
    const { endpoints, problems, mocked } = await runCluster(
      [
        networkPath("bound", "pg.team-a.svc.cluster.local", 5432),
        networkPath("bound-too", "pg.team-a.svc.cluster.local", 5432, 20001),
        networkPath("orders", "10.96.12.7", 5432),
        networkPath("gone", "old.team-a.svc.cluster.local", 5432),
      ],
      cluster(settings),
    );
    // Each name is asked once, addresses never.
    assert.deepEqual(asked.sort(), ["old.team-a.svc.cluster.local", "pg.team-a.svc.cluster.local"]);
    const patch = mocked.ofType("kubernetes:core/v1:ConfigMapPatch")[0]!;
    assert.deepEqual(parseClientConfig(patch.inputs.data["client-100.96.0.2.conf"]), [
      { listenPort: 5432, host: "10.96.40.2", port: 5432 },
      { listenPort: 20000, host: "10.96.12.7", port: 5432 },
      { listenPort: 20001, host: "10.96.40.2", port: 5432 },
    ]);
    assert.match(patch.inputs.data["flows-100.96.0.2.nft"], /100\.96\.0\.2 \. 10\.96\.40\.2 \. 5432/);
    assert.doesNotMatch(patch.inputs.data["flows-100.96.0.2.nft"], /svc\.cluster\.local/);
    assert.deepEqual(Object.keys(endpoints).sort(), ["bound", "bound-too", "orders"]);
    assert.equal(endpoints.bound!.hostForConsumer, settings.clientHost);
    assert.deepEqual(Object.keys(problems), ["gone"]);
    assert.equal(problems.gone!.reason, "HostUnresolved");
    assert.match(
      problems.gone!.message,
      /instanceHost "old\.team-a\.svc\.cluster\.local" does not resolve to an IPv4 address where the WireGuard gateway runs \(ENOTFOUND\)/,
    );
  });

  it("without the environment's tunnel settings every path says what to run, and nothing is built", async () => {
    const { mocked, endpoints, problems } = await runCluster(
      [networkPath("orders", "10.96.12.7", 5432)],
      cluster(),
    );
    assert.deepEqual(mocked.resources, []);
    assert.deepEqual(endpoints, {});
    assert.match(
      problems.orders!.message,
      /name no WireGuard tunnel for team-a\/wireguard: run `pulumi up` of the environment stack/,
    );
  });

  it("a client address outside the tunnel is refused on every path, never published", async () => {
    const { mocked, problems } = await runCluster(
      [networkPath("orders", "10.96.12.7", 5432)],
      cluster({ ...settings, clientAddress: "100.97.0.2" }),
    );
    assert.deepEqual(mocked.resources, []);
    assert.match(
      problems.orders!.message,
      /100\.97\.0\.2, which is not a client address of 100\.96\.0\.0\/24/,
    );
  });
});
