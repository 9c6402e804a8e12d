import { strict as assert } from "node:assert";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { WireguardTunnel, WireguardTunnelArgs } from "./wireguard-tunnel";
import { publicKeyFromPrivate } from "./model/keys";
import { wireguardKeyProvider } from "./key-provider";
import {
  MockedRun,
  mockPulumi,
  settle,
  valueOf,
  withServerSide,
  SECRET_SIG,
  SECRET_MARKER,
} from "../../test/helpers/mocks";
import { violations } from "../../programs/policy/rules";

// Pulumi's wire signature for secret values (sdk/nodejs/runtime/rpc.ts specialSigKey/specialSecretSig).
const KEY_TYPE = "pulumi-nodejs:dynamic/klutch:WireguardKeyPair";

function isSecretEnvelope(v: unknown): v is { value: unknown } {
  return typeof v === "object" && v !== null && (v as Record<string, unknown>)[SECRET_SIG] === SECRET_MARKER;
}

/** Every string reachable from `v` outside secret envelopes. */
function plainStrings(v: unknown, out: string[] = []): string[] {
  if (typeof v === "string") out.push(v);
  else if (isSecretEnvelope(v)) return out;
  else if (Array.isArray(v)) v.forEach((x) => plainStrings(x, out));
  else if (typeof v === "object" && v !== null) Object.values(v).forEach((x) => plainStrings(x, out));
  return out;
}

interface Run extends MockedRun {
  /** Private keys the key pair "provider" made, by resource name. */
  privateKeys: Map<string, string>;
}

/**
 * The shared mocks echo inputs as state. A dynamic provider computes its outputs, so for
 * key pairs this runs the real provider's create behind the shared mocks; the engine's
 * additionalSecretOutputs is deliberately NOT modelled, so the component has to keep the
 * private keys secret on its own.
 */
function mockRun(): Run {
  const run = mockPulumi({});
  const privateKeys = new Map<string, string>();
  withServerSide(async (args) => {
    if (args.type !== KEY_TYPE) return undefined;
    const { id, outs } = await wireguardKeyProvider.create({ rotation: args.inputs.rotation as string });
    privateKeys.set(args.name, outs!.privateKey);
    return { id, state: { ...args.inputs, ...outs } };
  });
  return { ...run, privateKeys };
}

function providers() {
  return {
    gateway: new k8s.Provider("ds", { kubeconfig: "fake" }),
    app1: new k8s.Provider("app-1", { kubeconfig: "fake" }),
    app2: new k8s.Provider("app-2", { kubeconfig: "fake" }),
  };
}

function tunnelArgs(
  p: ReturnType<typeof providers>,
  extra: Partial<WireguardTunnelArgs> = {},
): WireguardTunnelArgs {
  return {
    gatewayProvider: p.gateway,
    gatewayNamespace: "klutch-ds",
    appClusters: [
      { name: "app-1", provider: p.app1 },
      { name: "app-2", provider: p.app2, namespace: "wg-app-2" },
    ],
    connections: [
      { name: "pg-a", appCluster: "app-1", instanceHost: "10.50.0.10", port: 5432 },
      { name: "pg-a2", appCluster: "app-1", instanceHost: pulumi.output("10.50.0.12"), port: 5432 },
      { name: "pg-b", appCluster: "app-2", instanceHost: "10.50.0.20", port: pulumi.output(6432) },
    ],
    endpoint: "vpn.example.test",
    skipAwait: true,
    gatewayExposure: { sourceRanges: ["198.51.100.0/28", "10.20.0.0/16"], internal: false, public: false },
    ...extra,
  };
}

/** The registered outputs of the component, as the engine would store them. */
function registeredOutputs(name: string): Record<string, unknown> {
  const monitor = pulumi.runtime.getMonitor() as unknown as {
    getRegisteredResources(): Map<string, { urn: string; state: unknown }>;
  };
  const entry = [...monitor.getRegisteredResources().values()].find((r) =>
    r.urn.endsWith(`klutch:network:WireguardTunnel::${name}`),
  );
  assert.ok(entry, `component ${name} registered`);
  const state = entry.state as { toJavaScript?: () => Record<string, unknown> };
  return state.toJavaScript ? state.toJavaScript() : state;
}

async function finish(tunnel: WireguardTunnel): Promise<void> {
  await valueOf(tunnel.endpoints);
  await valueOf(tunnel.clientPublicKeys);
  await settle();
  await new Promise((r) => setTimeout(r, 50));
  await settle();
}

describe("WireguardTunnel (mocks)", function () {
  // The first dynamic resource serializes the provider's closure once (~1 s).
  this.timeout(30000);

  it("registers exactly the key pairs, Secrets, filter, workloads and Services", async () => {
    const run = mockRun();
    const p = providers();
    const tunnel = new WireguardTunnel("wg", tunnelArgs(p));
    await finish(tunnel);

    const count = (type: string) =>
      run
        .ofType(type)
        .map((r) => r.name)
        .sort();
    assert.deepEqual(count("klutch:network:WireguardTunnel"), ["wg"]);
    assert.deepEqual(count(KEY_TYPE), ["wg-app-1-key", "wg-app-2-key", "wg-gateway-key"]);
    assert.deepEqual(count("kubernetes:core/v1:Secret"), [
      "wg-app-1-client-secret",
      "wg-app-2-client-secret",
      "wg-gateway-secret",
    ]);
    assert.deepEqual(count("kubernetes:core/v1:ConfigMap"), ["wg-gateway-rules"]);
    assert.deepEqual(count("kubernetes:apps/v1:Deployment"), [
      "wg-app-1-client-deployment",
      "wg-app-2-client-deployment",
      "wg-gateway-deployment",
    ]);
    assert.deepEqual(count("kubernetes:core/v1:Service"), [
      "wg-gateway-service",
      "wg-pg-a-service",
      "wg-pg-a2-service",
      "wg-pg-b-service",
    ]);
    // Each end's pods admit only what reaches them (model/render-k8s.ts, the NetworkPolicies).
    assert.deepEqual(count("kubernetes:networking.k8s.io/v1:NetworkPolicy"), [
      "wg-app-1-client-ingress",
      "wg-app-2-client-ingress",
      "wg-gateway-ingress",
    ]);
    const known = new Set([
      "klutch:network:WireguardTunnel",
      KEY_TYPE,
      "kubernetes:core/v1:Secret",
      "kubernetes:core/v1:ConfigMap",
      "kubernetes:apps/v1:Deployment",
      "kubernetes:core/v1:Service",
      "kubernetes:networking.k8s.io/v1:NetworkPolicy",
      "pulumi:providers:kubernetes",
    ]);
    assert.deepEqual(
      run.resources.filter((r) => !known.has(r.type)).map((r) => r.type),
      [],
    );

    // each side through its own cluster's provider
    const providerOf = (name: string) => run.resources.find((r) => r.name === name)?.provider ?? "";
    for (const n of [
      "wg-gateway-secret",
      "wg-gateway-rules",
      "wg-gateway-deployment",
      "wg-gateway-service",
      "wg-gateway-ingress",
    ]) {
      assert.match(providerOf(n), /::ds::/, n);
    }
    for (const n of [
      "wg-app-1-client-secret",
      "wg-app-1-client-deployment",
      "wg-app-1-client-ingress",
      "wg-pg-a-service",
      "wg-pg-a2-service",
    ]) {
      assert.match(providerOf(n), /::app-1::/, n);
    }
    for (const n of ["wg-app-2-client-secret", "wg-app-2-client-deployment", "wg-pg-b-service"]) {
      assert.match(providerOf(n), /::app-2::/, n);
    }
    assert.equal(providerOf("wg-gateway-key"), "", "key pairs use the dynamic provider, not a cluster");

    // namespaces and skipAwait
    const byName = (n: string) => run.resources.find((r) => r.name === n)!.inputs;
    assert.equal(byName("wg-gateway-deployment").metadata.namespace, "klutch-ds");
    assert.equal(byName("wg-app-1-client-deployment").metadata.namespace, "klutch-wireguard");
    assert.equal(byName("wg-app-2-client-deployment").metadata.namespace, "wg-app-2");
    for (const r of [
      ...run.ofType("kubernetes:apps/v1:Deployment"),
      ...run.ofType("kubernetes:core/v1:Service"),
    ]) {
      assert.equal(r.inputs.metadata.annotations["pulumi.com/skipAwait"], "true", r.name);
    }
    // Only the app clusters' clients reach the gateway's load balancer (the policy pack's rule).
    assert.deepEqual(byName("wg-gateway-service").spec.loadBalancerSourceRanges, [
      "198.51.100.0/28",
      "10.20.0.0/16",
    ]);
    assert.equal(byName("wg-gateway-service").spec.externalTrafficPolicy, "Local");
    assert.deepEqual(
      violations(run.ofType("kubernetes:core/v1:Service").map((r) => ({ type: r.type, props: r.inputs }))),
      [],
    );
    assert.equal(byName("wg-gateway-service").spec.ports[0].protocol, "UDP");
    assert.equal(byName("wg-gateway-service").spec.ports[0].port, 51820);
    assert.deepEqual(byName("wg-pg-b-service").spec.ports, [
      { name: "tcp", protocol: "TCP", port: 6432, targetPort: 6432 },
    ]);

    assert.deepEqual(await valueOf(tunnel.endpoints), {
      "pg-a": { hostForConsumer: "wg-pg-a.klutch-wireguard.svc.cluster.local", port: 5432 },
      "pg-a2": { hostForConsumer: "wg-pg-a2.klutch-wireguard.svc.cluster.local", port: 5432 },
      "pg-b": { hostForConsumer: "wg-pg-b.wg-app-2.svc.cluster.local", port: 6432 },
    });
    assert.deepEqual(await valueOf(tunnel.assignments), { "app-1": "100.96.0.2", "app-2": "100.96.0.3" });
  });

  it("feeds the rotation trigger to every key pair", async () => {
    const run = mockRun();
    const tunnel = new WireguardTunnel("wg", tunnelArgs(providers(), { rotation: "2025-q3" }));
    await finish(tunnel);
    const keys = run.ofType(KEY_TYPE);
    assert.equal(keys.length, 3);
    for (const k of keys) {
      assert.equal(k.inputs.rotation, "2025-q3");
      assert.ok(!("privateKey" in k.inputs) || k.inputs.privateKey === undefined, "no key material goes in");
    }
    // the rotation also rolls the client pods (their config file is read once)
    const annotations = run
      .ofType("kubernetes:apps/v1:Deployment")
      .find((d) => d.name === "wg-app-1-client-deployment")!.inputs.spec.template.metadata.annotations;
    assert.match(annotations["klutch.anynines.com/tunnel-config"], /^[0-9a-f]{16}$/);
  });

  it("writes wg configs only as secrets, with the right keys in them", async () => {
    const run = mockRun();
    const tunnel = new WireguardTunnel("wg", tunnelArgs(providers()));
    await finish(tunnel);
    const priv = (n: string) => run.privateKeys.get(n)!;
    const pub = (n: string) => publicKeyFromPrivate(priv(n));

    const gw = run.ofType("kubernetes:core/v1:Secret").find((s) => s.name === "wg-gateway-secret")!;
    assert.ok(isSecretEnvelope(gw.inputs.stringData), "gateway stringData is a secret");
    const gwConf = (gw.inputs.stringData.value as Record<string, string>)["wg0.conf"]!;
    const gwSetconf = (gw.inputs.stringData.value as Record<string, string>)["wg0.setconf"]!;
    assert.ok(gwConf.includes(`PrivateKey = ${priv("wg-gateway-key")}`));
    assert.ok(gwConf.includes(`PublicKey = ${pub("wg-app-1-key")}\nAllowedIPs = 100.96.0.2/32`));
    assert.ok(gwConf.includes(`PublicKey = ${pub("wg-app-2-key")}\nAllowedIPs = 100.96.0.3/32`));
    assert.ok(gwSetconf.includes(`PrivateKey = ${priv("wg-gateway-key")}`));
    assert.doesNotMatch(gwSetconf, /Address/);

    const c1 = run.ofType("kubernetes:core/v1:Secret").find((s) => s.name === "wg-app-1-client-secret")!;
    assert.ok(isSecretEnvelope(c1.inputs.stringData), "client stringData is a secret");
    const c1Conf = (c1.inputs.stringData.value as Record<string, string>)["wg0.conf"]!;
    assert.ok(c1Conf.includes(`PrivateKey = ${priv("wg-app-1-key")}`));
    assert.ok(c1Conf.includes(`PublicKey = ${pub("wg-gateway-key")}`));
    assert.ok(c1Conf.includes("Endpoint = vpn.example.test:51820"));
    assert.ok(c1Conf.includes("AllowedIPs = 100.96.0.1/32, 10.50.0.10/32, 10.50.0.12/32"));
    const c2 = run.ofType("kubernetes:core/v1:Secret").find((s) => s.name === "wg-app-2-client-secret")!;
    assert.ok(
      (c2.inputs.stringData.value as Record<string, string>)["wg0.conf"]!.includes(
        "AllowedIPs = 100.96.0.1/32, 10.50.0.20/32",
      ),
    );

    // the filter ConfigMap is plain (reviewable) and holds the planned flows
    const rules = run.ofType("kubernetes:core/v1:ConfigMap")[0]!.inputs.data["rules.nft"] as string;
    assert.match(
      rules,
      /100\.96\.0\.2 \. 10\.50\.0\.10 \. 5432, 100\.96\.0\.2 \. 10\.50\.0\.12 \. 5432, 100\.96\.0\.3 \. 10\.50\.0\.20 \. 6432/,
    );
    assert.equal(await valueOf(tunnel.gatewayPublicKey), pub("wg-gateway-key"));
  });

  it("a NodePort gateway without an endpoint: the clients dial its node's address at the port the API server gave the Service", async () => {
    const run = mockRun();
    // The API server gives a NodePort Service its node port: the mock does the same.
    withServerSide((args, echoed) => {
      if (args.type !== "kubernetes:core/v1:Service" || args.inputs.spec?.type !== "NodePort")
        return undefined;
      const spec = args.inputs.spec as { ports: Record<string, unknown>[] };
      return {
        ...echoed,
        state: { ...args.inputs, spec: { ...spec, ports: [{ ...spec.ports[0], nodePort: 31820 }] } },
      };
    });
    const args: WireguardTunnelArgs = {
      ...tunnelArgs(providers(), { gatewayServiceType: "NodePort", gatewayNodeAddress: "172.30.0.6" }),
      endpoint: undefined,
    };
    const tunnel = new WireguardTunnel("wg", args);
    await finish(tunnel);
    const service = run.ofType("kubernetes:core/v1:Service").find((s) => s.name === "wg-gateway-service")!;
    assert.equal(service.inputs.spec.type, "NodePort");
    const c1 = run.ofType("kubernetes:core/v1:Secret").find((s) => s.name === "wg-app-1-client-secret")!;
    assert.ok(
      (c1.inputs.stringData.value as Record<string, string>)["wg0.conf"]!.includes(
        "Endpoint = 172.30.0.6:31820",
      ),
    );
  });

  it("leaks no private key into any plain input or output", async () => {
    const run = mockRun();
    const tunnel = new WireguardTunnel("wg", tunnelArgs(providers()));
    await finish(tunnel);
    const keys = [...run.privateKeys.values()];
    assert.equal(keys.length, 3);
    for (const r of run.resources) {
      for (const s of plainStrings(r.inputs)) {
        for (const k of keys) assert.ok(!s.includes(k), `private key in plain input of ${r.type} ${r.name}`);
      }
    }
    const outputs = registeredOutputs("wg");
    assert.deepEqual(Object.keys(outputs).sort(), [
      "assignments",
      "clientPublicKeys",
      "endpoints",
      "gatewayPublicKey",
      "plan",
    ]);
    for (const s of plainStrings(outputs)) {
      for (const k of keys) assert.ok(!s.includes(k), "private key in a plain component output");
    }
    assert.equal(await pulumi.isSecret(tunnel.plan), false, "the plan holds no key and stays readable");
  });

  it("gatewayVm: cloud-init as a secret output instead of gateway manifests", async () => {
    const run = mockRun();
    const p = providers();
    const tunnel = new WireguardTunnel("wg", {
      ...tunnelArgs(p),
      gatewayProvider: undefined,
      gatewayVm: true,
      endpoint: "203.0.113.10:51820",
    });
    await finish(tunnel);
    await valueOf(tunnel.gatewayUserData!);
    await settle();
    assert.equal(run.ofType(KEY_TYPE).length, 3);
    assert.deepEqual(
      run.resources.filter((r) => r.name.startsWith("wg-gateway-") && r.type !== KEY_TYPE).map((r) => r.name),
      [],
    );
    assert.equal(run.ofType("kubernetes:core/v1:Secret").length, 2);
    assert.equal(run.ofType("kubernetes:core/v1:Service").length, 3);
    assert.equal(await pulumi.isSecret(tunnel.gatewayUserData!), true);
    const userData = await valueOf(tunnel.gatewayUserData!);
    assert.ok(userData.startsWith("#cloud-config\n"));
    assert.ok(userData.includes(`PrivateKey = ${run.privateKeys.get("wg-gateway-key")}`));
    const outputs = registeredOutputs("wg");
    assert.ok(isSecretEnvelope(outputs.gatewayUserData), "registered as a secret output");
    const c1 = run.ofType("kubernetes:core/v1:Secret").find((s) => s.name === "wg-app-1-client-secret")!;
    assert.ok(
      (c1.inputs.stringData.value as Record<string, string>)["wg0.conf"]!.includes(
        "Endpoint = 203.0.113.10:51820",
      ),
    );
  });

  it("refuses a missing gateway placement and unknown app clusters up front, registering nothing", async () => {
    const run = mockRun();
    const p = providers();
    assert.throws(
      () => new WireguardTunnel("wg", { ...tunnelArgs(p), gatewayProvider: undefined }),
      /gatewayProvider is required.*or set gatewayVm: true/,
    );
    assert.throws(
      () =>
        new WireguardTunnel("wg2", {
          ...tunnelArgs(p),
          connections: [{ name: "pg-x", appCluster: "app-9", instanceHost: "10.0.0.1", port: 5432 }],
        }),
      /connections\[0\] \(pg-x\)\.appCluster "app-9" is not in appClusters \(app-1, app-2\)/,
    );
    assert.throws(
      () =>
        new WireguardTunnel("wg3", {
          ...tunnelArgs(p),
          appClusters: [{ name: "gateway", provider: p.app1 }],
        }),
      /may not be named "gateway"/,
    );
    const noExposure = { ...tunnelArgs(p), gatewayExposure: undefined };
    assert.throws(
      () => new WireguardTunnel("wg4", noExposure),
      /^Error: WireguardTunnel: gatewayExposure is required for a LoadBalancer Service: name who may connect \(gatewayExposure\.sourceRanges/,
    );
    assert.throws(
      () =>
        new WireguardTunnel("wg5", {
          ...tunnelArgs(p),
          gatewayExposure: { sourceRanges: ["0.0.0.0/0"], internal: false, public: false },
        }),
      /gatewayExposure\.sourceRanges 0\.0\.0\.0\/0 admits every address; set gatewayExposure\.public: true/,
    );
    await settle();
    assert.deepEqual(
      run.resources.filter((r) => !r.type.startsWith("pulumi:providers:")).map((r) => `${r.type}::${r.name}`),
      [],
    );
    // A ClusterIP gateway (clients in the same cluster) and a VM need none.
    assert.doesNotThrow(() => new WireguardTunnel("wg6", { ...noExposure, gatewayServiceType: "ClusterIP" }));
  });

  it("bridgeConnections: the gateway's empty flows ConfigMap, a headless Service per client, and what the bridge needs per app cluster", async () => {
    const run = mockRun();
    const p = providers();
    const tunnel = new WireguardTunnel("wg", tunnelArgs(p, { connections: [], bridgeConnections: true }));
    await finish(tunnel);
    const settings = await valueOf(tunnel.bridgeSettings!);
    assert.deepEqual(settings, {
      "app-1": {
        tunnelCidr: "100.96.0.0/24",
        clientAddress: "100.96.0.2",
        flows: { namespace: "klutch-ds", name: "wg-gateway-flows" },
        clientHost: "wg-client.klutch-wireguard.svc.cluster.local",
      },
      "app-2": {
        tunnelCidr: "100.96.0.0/24",
        clientAddress: "100.96.0.3",
        flows: { namespace: "klutch-ds", name: "wg-gateway-flows" },
        clientHost: "wg-client.wg-app-2.svc.cluster.local",
      },
    });
    const flows = run.ofType("kubernetes:core/v1:ConfigMap").find((c) => c.name === "wg-gateway-flows");
    assert.equal(flows?.inputs.data, undefined, "no data of its own: every key is a bridge group's");
    const headless = run
      .ofType("kubernetes:core/v1:Service")
      .filter((s) => s.inputs.spec?.clusterIP === "None")
      .map((s) => [s.name, s.provider?.includes("app-2") ? "app-2" : "app-1"]);
    assert.deepEqual(headless.sort(), [
      ["wg-app-1-client-service", "app-1"],
      ["wg-app-2-client-service", "app-2"],
    ]);
    assert.deepEqual(registeredOutputs("wg").bridgeSettings, settings);
  });

  it("bridgeConnections with a gateway VM needs the flows ConfigMap the VM reads, and then names it for the bridge", async () => {
    mockRun();
    const p = providers();
    assert.throws(
      () => new WireguardTunnel("wg", tunnelArgs(p, { gatewayVm: true, bridgeConnections: true })),
      /bridgeConnections with gatewayVm needs gatewayVmFlows/,
    );
    const flows = { namespace: "klutch-network", name: "env-wireguard-gateway-flows" };
    const tunnel = new WireguardTunnel(
      "wg-vm",
      tunnelArgs(p, { gatewayVm: true, bridgeConnections: true, gatewayVmFlows: flows, connections: [] }),
    );
    const settings = await valueOf(tunnel.bridgeSettings!);
    assert.deepEqual(settings["app-1"]?.flows, flows);
  });
});
