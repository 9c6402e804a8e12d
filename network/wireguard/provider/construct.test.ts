import { strict as assert } from "node:assert";
import * as pulumi from "@pulumi/pulumi";
import { wireguardKeyProvider } from "../key-provider";
import { wireguardProblems } from "./construct";
import { KlutchProvider } from "../../../programs/klutch-provider/provider";
import { UNKNOWN } from "../../../providers/kit/schema-model";
import { mockPulumi, plainStrings } from "../../../test/helpers/mocks";
import { ENGINE_UNKNOWN, finish, outputsOf } from "../../../test/helpers/provider";

const KEY_TYPE = "pulumi-nodejs:dynamic/klutch:WireguardKeyPair";

const KUBECONFIGS = {
  ds: "kubeconfig-of-ds\n",
  app1: "kubeconfig-of-app-1\n",
  app2: "kubeconfig-of-app-2\n",
};

function wireguardInputs(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    gatewayKubeconfig: pulumi.secret(KUBECONFIGS.ds),
    gatewayNamespace: "klutch-ds",
    appClusters: [
      { name: "app-1", kubeconfig: pulumi.secret(KUBECONFIGS.app1) },
      { name: "app-2", kubeconfig: pulumi.secret(KUBECONFIGS.app2), namespace: "wg-app-2" },
    ],
    connections: [
      { name: "pg-a", appCluster: "app-1", instanceHost: "10.50.0.10", port: 5432 },
      { name: "pg-b", appCluster: "app-2", instanceHost: "10.50.0.20", port: 6432 },
    ],
    endpoint: "vpn.example.test",
    skipAwait: true,
    gatewayExposure: { sourceRanges: ["10.20.0.0/16"], internal: true, public: false },
    ...extra,
  };
}

describe("klutch provider: WireguardTunnel", function () {
  // The first dynamic resource serializes the key provider's closure once (~1 s).
  this.timeout(30000);

  it("maps the schema's inputs onto the component: a provider per kubeconfig, kept secret, and the tunnel's objects on each", async () => {
    const run = mockPulumi({}, "test", { dynamicProviders: { [KEY_TYPE]: wireguardKeyProvider } });
    const made = await new KlutchProvider().construct(
      "wg",
      "klutch:network:WireguardTunnel",
      wireguardInputs(),
      {},
    );
    const { values, secret } = await outputsOf(made.state);
    await finish();

    const providers = run.ofType("pulumi:providers:kubernetes");
    assert.deepEqual(providers.map((p) => p.name).sort(), [
      "wg-app-1-kubernetes",
      "wg-app-2-kubernetes",
      "wg-gateway-kubernetes",
    ]);
    for (const p of providers) assert.ok(!plainStrings(p.inputs).some((s) => s.startsWith("kubeconfig-of-")));
    const on = (provider: string) =>
      run.resources
        .filter((r) => r.provider?.includes(`::${provider}::`))
        .map((r) => `${r.type.split(":").pop()}/${r.name}`)
        .sort();
    const gatewayService = run
      .ofType("kubernetes:core/v1:Service")
      .find((s) => s.name === "wg-gateway-service")!;
    assert.deepEqual(gatewayService.inputs.spec.loadBalancerSourceRanges, ["10.20.0.0/16"]);
    assert.deepEqual(
      on("wg-gateway-kubernetes"),
      [
        "Deployment/wg-gateway-deployment",
        "ConfigMap/wg-gateway-rules",
        "NetworkPolicy/wg-gateway-ingress",
        "Secret/wg-gateway-secret",
        "Service/wg-gateway-service",
      ].sort(),
    );
    assert.deepEqual(on("wg-app-2-kubernetes"), [
      "Deployment/wg-app-2-client-deployment",
      "NetworkPolicy/wg-app-2-client-ingress",
      "Secret/wg-app-2-client-secret",
      "Service/wg-pg-b-service",
    ]);
    const appTwoDeployment = run
      .ofType("kubernetes:apps/v1:Deployment")
      .find((d) => d.name === "wg-app-2-client-deployment")!;
    assert.equal(appTwoDeployment.inputs.metadata.namespace, "wg-app-2");

    assert.deepEqual(values.assignments, { "app-1": "100.96.0.2", "app-2": "100.96.0.3" });
    assert.deepEqual(Object.keys(values.endpoints as object).sort(), ["pg-a", "pg-b"]);
    assert.match(values.gatewayPublicKey as string, /^[A-Za-z0-9+/]{43}=$/);
    assert.deepEqual(Object.keys(values.clientPublicKeys as object).sort(), ["app-1", "app-2"]);
    assert.equal(values.gatewayUserData, undefined);
    assert.ok(!secret.has("assignments"));
    // No private key anywhere outside a secret.
    const keys = run.ofType(KEY_TYPE).map((k) => k.outputs!.privateKey as string);
    assert.equal(keys.length, 3);
    for (const r of run.resources)
      for (const s of plainStrings(r.inputs))
        for (const k of keys) assert.ok(!s.includes(k), `${r.name} shows a private key`);
  });

  it("gatewayVm: no gateway objects, the VM's cloud-init user data comes out as a secret", async () => {
    const run = mockPulumi({}, "test", { dynamicProviders: { [KEY_TYPE]: wireguardKeyProvider } });
    const inputs = wireguardInputs({ gatewayVm: true });
    delete inputs.gatewayKubeconfig;
    const made = await new KlutchProvider().construct("wg", "klutch:network:WireguardTunnel", inputs, {});
    const { values, secret } = await outputsOf(made.state);
    await finish();
    assert.ok(secret.has("gatewayUserData"));
    assert.match(values.gatewayUserData as string, /#cloud-config/);
    assert.ok(
      !run.resources.some((r) => r.name.startsWith("wg-gateway-") && r.type.startsWith("kubernetes:")),
    );
  });

  it("refuses bad input in one message naming each field, before anything is registered", async () => {
    const run = mockPulumi({});
    const inputs = wireguardInputs({
      tunnelCidr: "100.96.0.1/24",
      appClusters: [
        { name: "gateway", kubeconfig: pulumi.secret("k") },
        { name: "app-2", kubeconfig: pulumi.secret("k") },
      ],
    });
    delete inputs.gatewayKubeconfig;
    await assert.rejects(
      new KlutchProvider().construct("wg", "klutch:network:WireguardTunnel", inputs, {}),
      (err: Error) => {
        assert.match(err.message, /^WireguardTunnel wg: invalid arguments:/);
        assert.match(err.message, /gatewayKubeconfig is required .*or set gatewayVm: true/);
        assert.match(err.message, /appClusters\[0\]\.name "gateway" is reserved/);
        return true;
      },
    );
    assert.deepEqual(run.resources, []);
    // A LoadBalancer gateway open to the world by omission is refused too.
    const open = wireguardInputs({ gatewayExposure: undefined });
    await assert.rejects(
      new KlutchProvider().construct("wg", "klutch:network:WireguardTunnel", open, {}),
      (err: Error) => {
        assert.match(
          err.message,
          /gatewayExposure is required for a LoadBalancer Service: name who may connect \(gatewayExposure\.sourceRanges/,
        );
        return true;
      },
    );
    assert.deepEqual(run.resources, []);
  });

  it("runs the planner's checks up front: a connection to an unknown app cluster, a tunnel CIDR with host bits", () => {
    const values = {
      gatewayKubeconfig: "k",
      appClusters: [{ name: "app-1", kubeconfig: "k" }],
      connections: [{ name: "pg-a", appCluster: "app-9", instanceHost: "10.50.0.10", port: 5432 }],
      tunnelCidr: "100.96.0.1/24",
      gatewayServiceType: "ClusterIP",
    };
    const problems = wireguardProblems(values);
    assert.ok(
      problems.some((p) => /app-9/.test(p) && /appCluster/.test(p)),
      problems.join("\n"),
    );
    assert.ok(
      problems.some((p) => /tunnelCidr/.test(p) && /100\.96\.0\.1\/24/.test(p)),
      problems.join("\n"),
    );
    // An endpoint still to come from the gateway's Service is no problem before it exists.
    assert.deepEqual(
      wireguardProblems({ ...values, connections: [], tunnelCidr: undefined, endpoint: UNKNOWN }),
      [],
    );
    // A given endpoint is checked.
    assert.ok(
      wireguardProblems({ ...values, connections: [], tunnelCidr: undefined, endpoint: "vpn:x" }).some((p) =>
        /endpoint "vpn:x"/.test(p),
      ),
    );
  });

  it("an app cluster name not known yet (a preview) is refused with what to do", async () => {
    const run = mockPulumi({});
    await assert.rejects(
      new KlutchProvider().construct(
        "wg",
        "klutch:network:WireguardTunnel",
        wireguardInputs({ appClusters: [{ name: ENGINE_UNKNOWN, kubeconfig: "k" }], connections: [] }),
        {},
      ),
      /appClusters\[\]\.name must be known before the component is created/,
    );
    assert.deepEqual(run.resources, []);
  });
});
