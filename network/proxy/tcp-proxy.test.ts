import { strict as assert } from "node:assert";
import { createHash } from "node:crypto";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { TcpProxy, TcpProxyArgs } from "./tcp-proxy";
import { renderHaproxyConfig } from "./model/haproxy-config";
import { ProxyConnection } from "./model/types";
import { PortAllocationInputs, portAllocationProvider } from "./port-allocation";
import { MockedRun, mockPulumi, settle, valueOf, withServerSide } from "../../test/helpers/mocks";

const PORTS_TYPE = "pulumi-nodejs:dynamic/klutch:PortAllocation";
const CONFIGMAP = "kubernetes:core/v1:ConfigMap";
const DEPLOYMENT = "kubernetes:apps/v1:Deployment";
const NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy";
/** App clusters on a private network, as validation derives it from their node CIDRs. */
const PRIVATE_EXPOSURE = { sourceRanges: ["10.20.0.0/16", "10.30.0.0/16"], internal: true, public: false };
const SERVICE = "kubernetes:core/v1:Service";

/**
 * The shared mocks echo inputs as state. Two resources compute outputs for real, so this
 * runs them behind the shared mocks: PortAllocation through the real provider's check and
 * create, and the ConfigMap gets an auto-name as the Kubernetes provider would give it.
 */
function mockRun(): MockedRun {
  const run = mockPulumi({});
  withServerSide(async (args, echoed) => {
    if (args.type === CONFIGMAP) {
      const metadata = { ...(args.inputs.metadata as object), name: `${args.name}-abc123` };
      return { ...echoed, state: { ...args.inputs, metadata } };
    }
    if (args.type !== PORTS_TYPE) return undefined;
    const checked = await portAllocationProvider.check(
      {} as PortAllocationInputs,
      args.inputs as PortAllocationInputs,
    );
    const { id, outs } = await portAllocationProvider.create(checked.inputs!);
    return { id, state: { ...args.inputs, ...outs } };
  });
  return run;
}

const CONNECTIONS: ProxyConnection[] = [
  {
    id: "team-a/orders-db",
    instanceHost: "10.50.0.10",
    port: 5432,
    enhancements: [{ InstanceType: "PostgreSQL" }],
  },
  { id: "team-b/cache", instanceHost: "10.50.0.30", port: 6379 },
  {
    id: "team-b/billing-db",
    instanceHost: "10.50.0.20",
    port: 5432,
    enhancements: [{ ConnectionType: "tlsSNI", serverName: "billing.db.example.com" }],
  },
];

function args(extra: Partial<TcpProxyArgs> = {}): TcpProxyArgs {
  return {
    provider: new k8s.Provider("ds", { kubeconfig: "fake" }),
    namespace: "klutch-proxy",
    connections: [
      CONNECTIONS[0] as ProxyConnection,
      // host and port may be Outputs (e.g. read from a claim)
      {
        ...(CONNECTIONS[1] as ProxyConnection),
        instanceHost: pulumi.output("10.50.0.30"),
        port: pulumi.output(6379),
      },
      CONNECTIONS[2] as ProxyConnection,
    ],
    portRange: { from: 31000, to: 31099 },
    serviceType: "ClusterIP",
    ...extra,
  };
}

async function finish(proxy: TcpProxy): Promise<void> {
  await valueOf(proxy.endpoints);
  await valueOf(proxy.config);
  await settle();
  await new Promise((r) => setTimeout(r, 50));
  await settle();
}

function registeredUrns(): string[] {
  const monitor = pulumi.runtime.getMonitor() as unknown as {
    getRegisteredResources(): Map<string, { urn: string }>;
  };
  return [...monitor.getRegisteredResources().values()].map((r) => r.urn);
}

describe("TcpProxy (mocks)", function () {
  // The first dynamic resource serializes its provider's closure (~1 s).
  this.timeout(30000);

  it("registers exactly one allocation, ConfigMap, Deployment, Service and NetworkPolicy under the component", async () => {
    const run = mockRun();
    const proxy = new TcpProxy("klutch-proxy", args());
    await finish(proxy);

    const names = (type: string) => run.ofType(type).map((r) => r.name);
    assert.deepEqual(names("klutch:network:TcpProxy"), ["klutch-proxy"]);
    assert.deepEqual(names(PORTS_TYPE), ["klutch-proxy-ports"]);
    assert.deepEqual(names(CONFIGMAP), ["klutch-proxy-config"]);
    assert.deepEqual(names(DEPLOYMENT), ["klutch-proxy-deployment"]);
    assert.deepEqual(names(SERVICE), ["klutch-proxy-service"]);
    assert.deepEqual(names(NETWORK_POLICY), ["klutch-proxy-ingress"]);
    // Nothing else: no Namespace (it must exist), no Secret, no probe, no per-connection Service.
    const known = new Set([
      "klutch:network:TcpProxy",
      PORTS_TYPE,
      CONFIGMAP,
      DEPLOYMENT,
      SERVICE,
      NETWORK_POLICY,
      "pulumi:providers:kubernetes",
    ]);
    assert.deepEqual(
      run.resources.filter((r) => !known.has(r.type)).map((r) => r.type),
      [],
    );

    // Every child is parented to the component; Kubernetes objects go through the given provider.
    const children = registeredUrns().filter(
      (u) => !u.includes("pulumi:providers:") && !u.endsWith("::klutch-proxy"),
    );
    assert.equal(children.length, 5);
    for (const urn of children) assert.match(urn, /::klutch:network:TcpProxy\$/, urn);
    for (const r of [...run.ofType(CONFIGMAP), ...run.ofType(DEPLOYMENT), ...run.ofType(SERVICE)]) {
      assert.match(r.provider ?? "", /::ds::/, r.name);
    }
    assert.equal(run.ofType(PORTS_TYPE)[0]?.provider ?? "", "", "the allocation is not a Kubernetes object");
  });

  it("allocates ports, renders the config from them and reports each connection's endpoint", async () => {
    const run = mockRun();
    const proxy = new TcpProxy("klutch-proxy", args());
    await finish(proxy);

    const alloc = run.ofType(PORTS_TYPE)[0]!.inputs;
    assert.deepEqual(alloc.range, { from: 31000, to: 31099 });
    assert.deepEqual([...alloc.ids].sort(), ["*tls-sni", "team-a/orders-db", "team-b/cache"]);
    assert.deepEqual(alloc.reserved, [8404, 8405]);
    const assignments = { "*tls-sni": 31000, "team-a/orders-db": 31001, "team-b/cache": 31002 };
    assert.deepEqual(await valueOf(proxy.assignments), assignments);

    const config = run.ofType(CONFIGMAP)[0]!.inputs.data["haproxy.cfg"] as string;
    assert.equal(config, renderHaproxyConfig(CONNECTIONS, assignments, { nbthread: 2 }));
    assert.match(config, /^ {4}nbthread 2$/m);
    assert.equal(await valueOf(proxy.config), config);

    assert.deepEqual(await valueOf(proxy.endpoints), {
      "team-a/orders-db": { hostForConsumer: "klutch-proxy.klutch-proxy.svc.cluster.local", port: 31001 },
      "team-b/billing-db": { hostForConsumer: "klutch-proxy.klutch-proxy.svc.cluster.local", port: 31000 },
      "team-b/cache": { hostForConsumer: "klutch-proxy.klutch-proxy.svc.cluster.local", port: 31002 },
    });

    const svc = run.ofType(SERVICE)[0]!.inputs;
    assert.equal(svc.metadata.name, "klutch-proxy");
    assert.equal(svc.metadata.namespace, "klutch-proxy");
    assert.equal(svc.spec.type, "ClusterIP");
    assert.deepEqual(svc.spec.selector, {
      "app.kubernetes.io/name": "haproxy",
      "app.kubernetes.io/instance": "klutch-proxy",
    });
    assert.deepEqual(svc.spec.ports, [
      { name: "tcp-31000", port: 31000, targetPort: 31000, protocol: "TCP" },
      { name: "tcp-31001", port: 31001, targetPort: 31001, protocol: "TCP" },
      { name: "tcp-31002", port: 31002, targetPort: 31002, protocol: "TCP" },
    ]);
  });

  it("builds a hardened, probed Deployment that rolls when the config changes", async () => {
    const run = mockRun();
    const proxy = new TcpProxy("klutch-proxy", args({ replicas: 3 }));
    await finish(proxy);
    const dep = run.ofType(DEPLOYMENT)[0]!.inputs;
    const config = await valueOf(proxy.config);
    assert.equal(dep.metadata.name, "klutch-proxy");
    assert.equal(dep.spec.replicas, 3);
    assert.deepEqual(dep.spec.selector.matchLabels, {
      "app.kubernetes.io/name": "haproxy",
      "app.kubernetes.io/instance": "klutch-proxy",
    });
    assert.equal(
      dep.spec.template.metadata.annotations["checksum/config"],
      createHash("sha256").update(config).digest("hex"),
    );
    const pod = dep.spec.template.spec;
    assert.equal(pod.automountServiceAccountToken, false);
    assert.deepEqual(pod.securityContext, {
      runAsNonRoot: true,
      runAsUser: 99,
      runAsGroup: 99,
      seccompProfile: { type: "RuntimeDefault" },
    });
    assert.equal(pod.containers.length, 1);
    const c = pod.containers[0];
    assert.equal(c.image, "docker.io/library/haproxy:2.6.12");
    assert.deepEqual(c.args, ["-f", "/usr/local/etc/haproxy/haproxy.cfg", "-db"]);
    assert.deepEqual(c.securityContext, {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
    });
    assert.deepEqual(c.readinessProbe.httpGet, { path: "/healthz", port: 8405 });
    assert.deepEqual(c.livenessProbe.httpGet, { path: "/healthz", port: 8405 });
    assert.ok(c.resources.requests.cpu && c.resources.limits.memory);
    assert.deepEqual(
      c.ports.map((p: { containerPort: number }) => p.containerPort),
      [31000, 31001, 31002, 8405],
    );
    assert.deepEqual(pod.volumes, [{ name: "config", configMap: { name: "klutch-proxy-config-abc123" } }]);
    assert.deepEqual(c.volumeMounts, [
      { name: "config", mountPath: "/usr/local/etc/haproxy", readOnly: true },
    ]);

    // Another connection set: another checksum, so the pods roll.
    mockRun();
    const other = new TcpProxy("klutch-proxy", args({ connections: CONNECTIONS.slice(0, 1) }));
    await finish(other);
    assert.notEqual(await valueOf(other.config), config);
  });

  it("annotates the Deployment and Service with pulumi.com/skipAwait only when asked", async () => {
    for (const skipAwait of [true, false, undefined]) {
      const run = mockRun();
      await finish(new TcpProxy("klutch-proxy", args({ skipAwait })));
      for (const r of [...run.ofType(DEPLOYMENT), ...run.ofType(SERVICE)]) {
        const value = r.inputs.metadata.annotations?.["pulumi.com/skipAwait"];
        assert.equal(value, skipAwait ? "true" : undefined, `${r.name} with skipAwait=${String(skipAwait)}`);
      }
      assert.equal(run.ofType(CONFIGMAP)[0]!.inputs.metadata.annotations, undefined);
    }
  });

  it("with a listener check: ServiceListeners, not the Service await, proves the listeners (not for a LoadBalancer or with skipAwait)", async () => {
    const LISTENERS = "pulumi-nodejs:dynamic/klutch:ServiceListeners";
    const listenerCheck = { kubeconfig: "apiVersion: v1" };
    const nodePort = { serviceType: "NodePort", nodeHost: "192.0.2.10", exposure: PRIVATE_EXPOSURE } as const;
    for (const [extra, proven] of [
      [{ listenerCheck }, true],
      [{ listenerCheck, ...nodePort }, true],
      [{ listenerCheck, serviceType: "LoadBalancer", exposure: PRIVATE_EXPOSURE }, false],
      [{ listenerCheck, skipAwait: true }, false],
      [{}, false],
    ] as [Partial<TcpProxyArgs>, boolean][]) {
      const run = mockRun();
      await finish(new TcpProxy("klutch-proxy", args(extra)));
      const label = JSON.stringify({ ...extra, exposure: undefined });
      const service = run.ofType(SERVICE)[0]!;
      const deployment = run.ofType(DEPLOYMENT)[0]!;
      const serviceSkips = service.inputs.metadata.annotations?.["pulumi.com/skipAwait"] === "true";
      assert.equal(serviceSkips, proven || extra.skipAwait === true, `Service await skipped: ${label}`);
      assert.equal(
        deployment.inputs.metadata.annotations?.["pulumi.com/skipAwait"],
        extra.skipAwait ? "true" : undefined,
        `the Deployment's rollout is still awaited: ${label}`,
      );
      const listeners = run.ofType(LISTENERS);
      assert.equal(listeners.length, proven ? 1 : 0, label);
      if (!proven) continue;
      const inputs = listeners[0]!.inputs;
      assert.equal(listeners[0]!.name, "klutch-proxy-listeners");
      assert.equal(inputs.service, "klutch-proxy");
      assert.deepEqual(inputs.ports, [31000, 31001, 31002]);
      assert.equal(inputs.checksum, deployment.inputs.spec.template.metadata.annotations["checksum/config"]);
      assert.deepEqual(inputs.selector, deployment.inputs.spec.selector.matchLabels);
    }
  });

  it("NodePort: node ports equal the allocated ports and consumers get the node host", async () => {
    const run = mockRun();
    const proxy = new TcpProxy(
      "klutch-proxy",
      args({
        serviceType: "NodePort",
        nodeHost: "192.0.2.10",
        connections: CONNECTIONS.slice(1, 2),
        exposure: PRIVATE_EXPOSURE,
      }),
    );
    await finish(proxy);
    assert.deepEqual(run.ofType(SERVICE)[0]!.inputs.spec.ports, [
      { name: "tcp-31000", port: 31000, targetPort: 31000, protocol: "TCP", nodePort: 31000 },
    ]);
    assert.deepEqual(await valueOf(proxy.endpoints), {
      "team-b/cache": { hostForConsumer: "192.0.2.10", port: 31000 },
    });
  });

  it("with no connections the Service still has a port (the health endpoint)", async () => {
    const run = mockRun();
    const proxy = new TcpProxy("klutch-proxy", args({ connections: [], externalHost: "proxy.example.com" }));
    await finish(proxy);
    assert.deepEqual(run.ofType(SERVICE)[0]!.inputs.spec.ports, [
      { name: "health", port: 8405, targetPort: 8405, protocol: "TCP" },
    ]);
    assert.deepEqual(await valueOf(proxy.endpoints), {});
    assert.equal(run.ofType(SERVICE)[0]!.inputs.spec.type, "ClusterIP");
  });

  it("defaults to a LoadBalancer Service, two replicas and the 30000-30999 range", async () => {
    const run = mockRun();
    const defaults = args({ exposure: PRIVATE_EXPOSURE });
    delete defaults.serviceType;
    delete defaults.portRange;
    await finish(new TcpProxy("klutch-proxy", defaults));
    assert.equal(run.ofType(SERVICE)[0]!.inputs.spec.type, "LoadBalancer");
    assert.equal(run.ofType(DEPLOYMENT)[0]!.inputs.spec.replicas, 2);
    assert.deepEqual(run.ofType(PORTS_TYPE)[0]!.inputs.range, { from: 30000, to: 30999 });
  });

  it("shares CPUs by default: small requests, no CPU limit, two threads, no busy polling", async () => {
    const run = mockRun();
    await finish(new TcpProxy("klutch-proxy", args()));
    const container = run.ofType(DEPLOYMENT)[0]!.inputs.spec.template.spec.containers[0];
    assert.deepEqual(container.resources, {
      requests: { cpu: "100m", memory: "64Mi" },
      limits: { memory: "256Mi" },
    });
    const config = run.ofType(CONFIGMAP)[0]!.inputs.data["haproxy.cfg"] as string;
    assert.match(config, /^ {4}nbthread 2$/m);
    assert.doesNotMatch(config, /busy-polling/);
  });

  it("with dedicatedCpus: Guaranteed QoS with whole CPUs, one thread per CPU, busy polling", async () => {
    const run = mockRun();
    await finish(new TcpProxy("klutch-proxy", args({ dedicatedCpus: 2 })));
    const container = run.ofType(DEPLOYMENT)[0]!.inputs.spec.template.spec.containers[0];
    // requests == limits with an integer CPU count: what the static CPU manager pins.
    assert.deepEqual(container.resources, {
      requests: { cpu: "2", memory: "256Mi" },
      limits: { cpu: "2", memory: "256Mi" },
    });
    const config = run.ofType(CONFIGMAP)[0]!.inputs.data["haproxy.cfg"] as string;
    assert.match(config, /^ {4}nbthread 2\n {4}busy-polling$/m);
  });

  it("rejects dedicated-CPU settings that contradict each other", () => {
    mockRun();
    assert.throws(
      () => new TcpProxy("p", args({ dedicatedCpus: 1.5 })),
      /TcpProxy p: dedicatedCpus must be a whole number of CPUs from 1 to 64 \(got 1\.5\); leave it unset to share CPUs/,
    );
    assert.throws(
      () => new TcpProxy("p", args({ dedicatedCpus: 0 })),
      /dedicatedCpus must be a whole number/,
    );
    assert.throws(
      () => new TcpProxy("p", args({ dedicatedCpus: 2, haproxy: { nbthread: 4 } })),
      /TcpProxy p: haproxy\.nbthread 4 differs from dedicatedCpus 2; .* drop haproxy\.nbthread/,
    );
    assert.throws(
      () => new TcpProxy("p", args({ haproxy: { busyPolling: true } })),
      /TcpProxy p: haproxy\.busyPolling keeps a CPU fully busy per thread, .* set dedicatedCpus instead/,
    );
  });

  it("rejects bad arguments by name at construction, registering nothing", async () => {
    const run = mockRun();
    assert.throws(
      () => new TcpProxy("Klutch_Proxy", args()),
      /TcpProxy name "Klutch_Proxy" names the Service, so it must be a DNS-1035 label/,
    );
    assert.throws(
      () => new TcpProxy("p", args({ serviceType: "ExternalName" as "ClusterIP" })),
      /TcpProxy p: serviceType "ExternalName" must be one of ClusterIP, NodePort, LoadBalancer/,
    );
    assert.throws(
      () =>
        new TcpProxy("p", args({ connections: [CONNECTIONS[1]!, { ...CONNECTIONS[1]!, instanceHost: "" }] })),
      /TcpProxy p: invalid connections:\n {2}- connections\[1\]\.id "team-b\/cache" duplicates connections\[0\]; ids must be unique\n {2}- connections\[1\]\.instanceHost is empty/,
    );
    assert.throws(
      () => new TcpProxy("p", args({ portRange: { from: 31000, to: 30000 } })),
      /TcpProxy p: portRange\.from \(31000\) must not be greater than portRange\.to \(30000\)/,
    );
    await settle();
    assert.deepEqual(
      run.resources.filter((r) => !r.type.startsWith("pulumi:providers:")).map((r) => `${r.type}::${r.name}`),
      [],
    );
  });

  describe("is not an open relay", () => {
    it("a LoadBalancer admits only the given sources, internally, on the listener ports, pods included", async () => {
      const run = mockRun();
      await finish(
        new TcpProxy("klutch-proxy", args({ serviceType: "LoadBalancer", exposure: PRIVATE_EXPOSURE })),
      );
      const service = run.ofType(SERVICE)[0]!.inputs;
      assert.deepEqual(service.spec.loadBalancerSourceRanges, ["10.20.0.0/16", "10.30.0.0/16"]);
      assert.equal(service.spec.externalTrafficPolicy, "Local");
      assert.equal(
        service.metadata.annotations["service.beta.kubernetes.io/aws-load-balancer-scheme"],
        "internal",
      );
      assert.equal(
        service.metadata.annotations["service.beta.kubernetes.io/openstack-internal-load-balancer"],
        "true",
      );
      const policy = run.ofType(NETWORK_POLICY)[0]!.inputs;
      assert.deepEqual(policy.spec.podSelector, run.ofType(DEPLOYMENT)[0]!.inputs.spec.selector);
      assert.deepEqual(policy.spec.policyTypes, ["Ingress"]);
      const listenerPorts = (service.spec.ports as { port: number }[]).map((p) => p.port);
      assert.deepEqual(policy.spec.ingress, [
        {
          from: [{ ipBlock: { cidr: "10.20.0.0/16" } }, { ipBlock: { cidr: "10.30.0.0/16" } }],
          ports: listenerPorts.map((port) => ({ protocol: "TCP", port })),
        },
      ]);
    });

    it("public sources get an internet-facing LoadBalancer only with the explicit public marker", async () => {
      const run = mockRun();
      await finish(
        new TcpProxy(
          "klutch-proxy",
          args({
            serviceType: "LoadBalancer",
            exposure: { sourceRanges: ["203.0.113.0/24"], internal: false, public: false },
          }),
        ),
      );
      const service = run.ofType(SERVICE)[0]!.inputs;
      assert.deepEqual(service.spec.loadBalancerSourceRanges, ["203.0.113.0/24"]);
      assert.deepEqual(service.metadata.annotations, {});

      const world = mockRun();
      await finish(
        new TcpProxy(
          "klutch-proxy",
          args({
            serviceType: "LoadBalancer",
            exposure: { sourceRanges: ["0.0.0.0/0"], internal: false, public: true },
          }),
        ),
      );
      assert.equal(
        world.ofType(SERVICE)[0]!.inputs.metadata.annotations["klutch.anynines.com/public-endpoint"],
        "true",
      );
    });

    it("a ClusterIP proxy admits only the cluster's own pods", async () => {
      const run = mockRun();
      await finish(new TcpProxy("klutch-proxy", args()));
      assert.deepEqual(run.ofType(NETWORK_POLICY)[0]!.inputs.spec.ingress[0].from, [
        { namespaceSelector: {} },
      ]);
      assert.equal(run.ofType(SERVICE)[0]!.inputs.spec.loadBalancerSourceRanges, undefined);
    });

    it("refuses a NodePort or LoadBalancer proxy that does not say who may connect, or says everyone by accident", () => {
      mockRun();
      assert.throws(
        () => new TcpProxy("p", args({ serviceType: "LoadBalancer" })),
        /TcpProxy p: exposure is required for a LoadBalancer Service: name who may connect/,
      );
      assert.throws(
        () =>
          new TcpProxy(
            "p",
            args({
              serviceType: "NodePort",
              exposure: { sourceRanges: ["0.0.0.0/0"], internal: false, public: false },
            }),
          ),
        /exposure\.sourceRanges 0\.0\.0\.0\/0 admits every address; set exposure\.public: true/,
      );
      assert.throws(
        () =>
          new TcpProxy(
            "p",
            args({ serviceType: "LoadBalancer", exposure: { ...PRIVATE_EXPOSURE, sourceRanges: [] } }),
          ),
        /exposure\.sourceRanges is empty/,
      );
    });
  });
});
