import { strict as assert } from "node:assert";
import * as k8s from "@pulumi/kubernetes";
import { KernelPath, type KernelPathArgs } from "./kernel-path";
import { portAllocationProvider } from "./port-allocation";
import { mockPulumi, settle, valueOf } from "../../test/helpers/mocks";

const PORTS = "pulumi-nodejs:dynamic/klutch:PortAllocation";
const SERVICE = "kubernetes:core/v1:Service";
const SLICE = "kubernetes:discovery.k8s.io/v1:EndpointSlice";
const PG = "pg.team-a.svc.cluster.local";

function args(extra: Partial<KernelPathArgs> = {}): KernelPathArgs {
  return {
    provider: new k8s.Provider("ds", { kubeconfig: "fake" }),
    namespace: "klutch-network",
    connections: [
      { id: "team-a/orders", instanceHost: PG, port: 5432 },
      { id: "team-a/vm", instanceHost: "10.50.0.20", port: 5432 },
    ],
    backends: {
      [`${PG}:5432`]: {
        backends: [
          { address: "10.244.0.9", port: 5432 },
          { address: "10.244.0.7", port: 5432 },
          // A rollout that renumbers the target port: a second slice.
          { address: "10.244.0.8", port: 15432 },
        ],
      },
    },
    portRange: { from: 31000, to: 31099 },
    serviceType: "ClusterIP",
    ...extra,
  };
}

describe("KernelPath (mocks)", function () {
  this.timeout(30000);

  it("registers an allocation, a Service without selector and one EndpointSlice per connection and target port, and nothing that runs", async () => {
    const run = mockPulumi({}, "test", { dynamicProviders: { [PORTS]: portAllocationProvider } });
    const path = new KernelPath("np-team-a-proxy", args());
    const endpoints = await valueOf(path.endpoints);
    await settle();
    assert.deepEqual(
      [...new Set(run.resources.map((r) => r.type))].sort(),
      ["klutch:network:KernelPath", PORTS, SERVICE, SLICE, "pulumi:providers:kubernetes"].sort(),
    );
    const [service] = run.ofType(SERVICE);
    assert.equal(service?.inputs.spec.selector, undefined);
    assert.equal(service?.inputs.metadata.annotations["pulumi.com/skipAwait"], "true");
    const ports = service?.inputs.spec.ports as { name: string; port: number }[];
    assert.equal(ports.length, 2);
    const slices = run.ofType(SLICE).map((s) => ({
      addresses: (s.inputs.endpoints as { addresses: string[] }[]).map((e) => e.addresses[0]),
      port: (s.inputs.ports as { name: string; port: number }[])[0],
      service: s.inputs.metadata.labels["kubernetes.io/service-name"],
      managedBy: s.inputs.metadata.labels["endpointslice.kubernetes.io/managed-by"],
    }));
    assert.equal(slices.length, 3);
    for (const s of slices) {
      assert.equal(s.service, "np-team-a-proxy");
      // A label value: no '/' (the API server refuses one), as endpointslice-controller.k8s.io.
      assert.match(s.managedBy, /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
      assert.ok(
        ports.some((p) => p.name === s.port?.name),
        `slice port ${s.port?.name} names a Service port`,
      );
    }
    assert.deepEqual(slices.map((s) => [s.addresses, s.port?.port]).sort(), [
      [["10.244.0.7", "10.244.0.9"], 5432],
      [["10.244.0.8"], 15432],
      [["10.50.0.20"], 5432],
    ]);
    assert.deepEqual(Object.keys(endpoints).sort(), ["team-a/orders", "team-a/vm"]);
    assert.equal(
      endpoints["team-a/orders"]?.hostForConsumer,
      "np-team-a-proxy.klutch-network.svc.cluster.local",
    );
    assert.deepEqual(path.problems, {});
  });

  it("NodePort: node ports equal to the Service ports, traffic policy Cluster (mirrored endpoints have no node)", async () => {
    const run = mockPulumi({}, "test", { dynamicProviders: { [PORTS]: portAllocationProvider } });
    const path = new KernelPath(
      "np-team-a-proxy",
      args({
        serviceType: "NodePort",
        exposure: { sourceRanges: ["0.0.0.0/0"], internal: false, public: true },
        nodeHost: "192.0.2.10",
      }),
    );
    const endpoints = await valueOf(path.endpoints);
    await settle();
    const [service] = run.ofType(SERVICE);
    assert.equal(service?.inputs.spec.externalTrafficPolicy, "Cluster");
    for (const p of service?.inputs.spec.ports as { port: number; nodePort: number }[])
      assert.equal(p.nodePort, p.port);
    assert.equal(endpoints["team-a/orders"]?.hostForConsumer, "192.0.2.10");
  });

  it("a connection it cannot carry is left out with its reason; the others are served", async () => {
    mockPulumi({}, "test", { dynamicProviders: { [PORTS]: portAllocationProvider } });
    const path = new KernelPath(
      "np-team-a-proxy",
      args({
        connections: [
          { id: "team-a/orders", instanceHost: PG, port: 5432 },
          { id: "team-a/ext", instanceHost: "db.example.com", port: 5432 },
          {
            id: "team-a/sni",
            instanceHost: "10.50.0.20",
            port: 5432,
            enhancements: [{ ConnectionType: "tlsSNI", serverName: "pg.example.com" }],
          },
        ],
      }),
    );
    const endpoints = await valueOf(path.endpoints);
    await settle();
    assert.deepEqual(Object.keys(endpoints), ["team-a/orders"]);
    assert.deepEqual(Object.fromEntries(Object.entries(path.problems).map(([id, p]) => [id, p.reason])), {
      "team-a/ext": "HostUnresolved",
      "team-a/sni": "InvalidConnection",
    });
  });

  it("refuses bad input before registering anything, naming the field", () => {
    const run = mockPulumi({});
    assert.throws(() => new KernelPath("Bad_Name", args()), /KernelPath name "Bad_Name" .*DNS-1035/);
    assert.throws(
      () => new KernelPath("np-x", args({ serviceType: "NodePort" })),
      /KernelPath np-x: .*exposure/,
    );
    assert.throws(
      () =>
        new KernelPath(
          "np-x",
          args({
            connections: [
              { id: "a/b", instanceHost: "10.0.0.1", port: 1 },
              { id: "a/b", instanceHost: "10.0.0.2", port: 1 },
            ],
          }),
        ),
      /connection id "a\/b" appears twice/,
    );
    assert.deepEqual(
      run.resources.filter((r) => r.type !== "pulumi:providers:kubernetes"),
      [],
    );
  });
});
