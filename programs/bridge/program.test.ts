import { strict as assert } from "node:assert";
import * as net from "node:net";
import * as pulumi from "@pulumi/pulumi";
import { groupProgram, type Target } from "./program";
import type { PathEndpoint, NetworkPathObject, PathProblem } from "../../lib/bridge/model";
import { connectivityProbeProvider } from "../../network/shared/connectivity-probe";
import { portAllocationProvider } from "../../network/proxy/port-allocation";
import { mockPulumi, settle, valueOf } from "../../test/helpers/mocks";
import { networkPath as pathOf } from "../../test/helpers/network-path";

const PROBE = "pulumi-nodejs:dynamic/klutch:ConnectivityProbe";
const PORTS = "pulumi-nodejs:dynamic/klutch:PortAllocation";

const networkPath = (name: string, implementation: string, port: number): NetworkPathObject =>
  pathOf(name, { spec: { implementation, instanceHost: "127.0.0.1", port } });

const LOCAL: Target = {
  kind: "local",
  stateDir: "/nonexistent",
  bindAddress: "127.0.0.1",
  portRange: { from: 42000, to: 42049 },
};

async function outputsOf(
  program: () => Promise<Record<string, unknown>>,
): Promise<Record<string, PathEndpoint>> {
  const outputs = await program();
  const endpoints = await valueOf(outputs.endpoints as pulumi.Output<Record<string, PathEndpoint>>);
  await settle();
  return endpoints;
}

describe("Crossplane bridge: group programs (mocks, real probes)", function () {
  this.timeout(30000);

  let listener: net.Server;
  let livePort: number;
  let deadPort: number;
  before(async () => {
    listener = net.createServer((s) => s.end());
    await new Promise<void>((r) => listener.listen(0, "127.0.0.1", r));
    livePort = (listener.address() as net.AddressInfo).port;
    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    deadPort = (closed.address() as net.AddressInfo).port;
    await new Promise((r) => closed.close(r));
  });
  after(() => listener.close());

  it("routed (awsVpcPeering): one probe per path, the instance as endpoint, the probe's verdict attached, nothing else", async () => {
    const run = mockPulumi({}, "test", { dynamicProviders: { [PROBE]: connectivityProbeProvider } });
    const paths = [
      networkPath("live", "awsVpcPeering", livePort),
      networkPath("dead", "awsVpcPeering", deadPort),
    ];
    const endpoints = await outputsOf(groupProgram("team-a/awsVpcPeering", paths, LOCAL));

    assert.deepEqual(
      run.resources.map((r) => r.type),
      [PROBE, PROBE],
      "no proxy, no port allocation, no Kubernetes object",
    );
    for (const probe of run.ofType(PROBE)) {
      assert.equal(probe.inputs.settleMs, 0, "no proxy in between: an accept is the instance's");
      assert.equal(probe.inputs.host, "127.0.0.1");
    }
    assert.deepEqual(endpoints.live, {
      hostForConsumer: "127.0.0.1",
      port: livePort,
      probe: { ready: true, reason: "ConnectivityEstablished", message: endpoints.live?.probe?.message },
    });
    assert.equal(endpoints.dead?.port, deadPort);
    assert.equal(endpoints.dead?.probe?.ready, false);
    assert.equal(endpoints.dead?.probe?.reason, "ConnectionRefused");
  });

  it("proxy (local target): a port allocation and a local HAProxy, no probe", async () => {
    const run = mockPulumi({}, "test", { dynamicProviders: { [PORTS]: portAllocationProvider } });
    const endpoints = await outputsOf(
      groupProgram("team-a/proxy", [networkPath("db", "proxy", livePort)], LOCAL),
    );
    assert.deepEqual(
      run.resources.map((r) => r.type),
      [PORTS, "pulumi-nodejs:dynamic/klutch:LocalHaproxy"],
    );
    assert.equal(endpoints.db?.hostForConsumer, "127.0.0.1");
    assert.ok(endpoints.db.port >= 42000 && endpoints.db.port <= 42049);
    assert.equal(endpoints.db?.probe, undefined);
  });

  it("proxy (local target): connections that do not fit, or that the proxy cannot serve, are left out alone", async () => {
    mockPulumi({}, "test", { dynamicProviders: { [PORTS]: portAllocationProvider } });
    // 6 ports, 2 of them HAProxy's own stats and health listeners: room for 4 connections.
    const small: Target = { ...LOCAL, portRange: { from: 42000, to: 42005 } };
    const paths = ["a", "b", "c", "d", "e", "f"].map((n) => networkPath(n, "proxy", livePort));
    paths.push({
      ...networkPath("bad", "proxy", livePort),
      spec: { ...networkPath("bad", "proxy", 1).spec, instanceHost: "not a host!" },
    });
    const outputs = await groupProgram("team-a/proxy", paths, small)();
    const endpoints = await valueOf(outputs.endpoints as pulumi.Output<Record<string, PathEndpoint>>);
    const problems = await valueOf(outputs.problems as pulumi.Output<Record<string, PathProblem>>);
    await settle();
    assert.deepEqual(Object.keys(endpoints).sort(), ["a", "b", "c", "d"]);
    assert.equal(new Set(Object.values(endpoints).map((e) => e.port)).size, 4);
    assert.deepEqual(Object.keys(problems).sort(), ["bad", "e", "f"]);
    assert.equal(problems.e?.reason, "PortRangeExhausted");
    assert.match(
      problems.e?.message ?? "",
      /port range 42000-42005, 6 ports \(2 of them the proxy's own listeners\), and 6 connections need one; a group grows into free slots of the bridge's --port-range up to --max-ports-per-group: raise that \(or widen --port-range\) so the group can have at least 8 ports/,
    );
    assert.equal(problems.bad?.reason, "InvalidConnection");
    assert.match(
      problems.bad?.message ?? "",
      /spec\.instanceHost "not a host!" is neither a DNS name nor an IP address/,
    );
  });

  it("proxy (kubernetes target): dedicatedCpus reaches the TcpProxy's pods", async () => {
    const run = mockPulumi({}, "test", { dynamicProviders: { [PORTS]: portAllocationProvider } });
    const target: Target = {
      kind: "kubernetes",
      kubeconfig: "apiVersion: v1\nkind: Config\n",
      namespace: "klutch-network",
      portRange: { from: 30000, to: 30099 },
      serviceType: "ClusterIP",
      dedicatedCpus: 2,
    };
    await outputsOf(groupProgram("team-a/proxy", [networkPath("db", "proxy", livePort)], target));
    await new Promise((r) => setTimeout(r, 50));
    await settle();
    const deployment = run.ofType("kubernetes:apps/v1:Deployment")[0];
    assert.deepEqual(deployment?.inputs.spec.template.spec.containers[0].resources, {
      requests: { cpu: "2", memory: "256Mi" },
      limits: { cpu: "2", memory: "256Mi" },
    });
  });

  it("proxy (kubernetes target), kernel hop: a selector-less Service and an EndpointSlice per path at its instance's endpoints, no HAProxy; a path the hop cannot follow gets its problem, the others their endpoints", async () => {
    const run = mockPulumi({}, "test", { dynamicProviders: { [PORTS]: portAllocationProvider } });
    const pg = "pg.team-a.svc.cluster.local";
    const target: Target = {
      kind: "kubernetes",
      kubeconfig: "apiVersion: v1\nkind: Config\n",
      namespace: "klutch-network",
      portRange: { from: 30000, to: 30099 },
      serviceType: "ClusterIP",
      hop: "kernel",
      backends: { [`${pg}:5432`]: { backends: [{ address: "10.244.0.7", port: 5432 }] } },
    };
    const paths = [
      pathOf("orders", { spec: { implementation: "proxy", instanceHost: pg, port: 5432 } }),
      pathOf("direct", { spec: { implementation: "proxy", instanceHost: "10.244.0.9", port: 5433 } }),
      pathOf("external", { spec: { implementation: "proxy", instanceHost: "db.example.com", port: 5432 } }),
    ];
    const outputs = await groupProgram("team-a/proxy", paths, target)();
    const endpoints = await valueOf(outputs.endpoints as pulumi.Output<Record<string, PathEndpoint>>);
    const problems = await valueOf(outputs.problems as pulumi.Output<Record<string, PathProblem>>);
    await settle();
    assert.deepEqual(Object.keys(endpoints).sort(), ["direct", "orders"]);
    assert.equal(endpoints.orders?.hostForConsumer, "np-team-a-proxy.klutch-network.svc.cluster.local");
    assert.deepEqual(Object.keys(problems), ["external"]);
    assert.equal(problems.external?.reason, "HostUnresolved");
    assert.match(problems.external?.message ?? "", /"db\.example\.com" is neither an IPv4 address/);
    assert.deepEqual(run.ofType("kubernetes:apps/v1:Deployment"), []);
    assert.deepEqual(run.ofType("kubernetes:networking.k8s.io/v1:NetworkPolicy"), []);
    const [service] = run.ofType("kubernetes:core/v1:Service");
    assert.equal(service?.inputs.spec.selector, undefined);
    const slices = run.ofType("kubernetes:discovery.k8s.io/v1:EndpointSlice");
    assert.deepEqual(
      slices.map((s) => s.inputs.endpoints.map((e: { addresses: string[] }) => e.addresses[0])).sort(),
      [["10.244.0.7"], ["10.244.0.9"]],
    );
    for (const slice of slices) {
      assert.equal(slice.inputs.metadata.labels["kubernetes.io/service-name"], "np-team-a-proxy");
    }
  });

  it("an implementation the bridge does not realise fails the run, naming the ones it does", async () => {
    mockPulumi({});
    await assert.rejects(
      groupProgram("team-a/istioMesh", [networkPath("x", "istioMesh", livePort)], LOCAL)(),
      /implementation "istioMesh" is not realised by this bridge; it realises proxy, wireguard, awsVpcPeering, openstack/,
    );
  });
});
