import { strict as assert } from "node:assert";
import * as pulumi from "@pulumi/pulumi";
import { portAllocationProvider, type PortAllocationInputs } from "./port-allocation";
import { klutchProgram } from "../../programs/stack/program";
import { groupProgram, type Target } from "../../programs/bridge/program";
import type { NetworkPathObject } from "../../lib/bridge/model";
import { SETTINGS_KEY } from "../../lib/bridge/settings";
import { parseBridgeSettings, targetWithSettings } from "../group-settings";
import { mockPulumi, settle, valueOf, withServerSide } from "../../test/helpers/mocks";
import { stackSettings } from "../../test/helpers/stacks";

const PORTS_TYPE = "pulumi-nodejs:dynamic/klutch:PortAllocation";
const SERVICE = "kubernetes:core/v1:Service";
const NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy";

async function drain(): Promise<void> {
  for (let i = 0; i < 4; i++) {
    await settle();
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * From a cloud stack to the proxy Service: the environment stack (mocked clouds) writes the
 * bridge settings, and the bridge's proxy program, given the target the bridge builds from
 * them, makes a Service that admits exactly the consumers' CIDRs.
 */
async function proxyFor(stack: string, config: Record<string, any>, namespace: string) {
  const env = mockPulumi(config, stack);
  klutchProgram();
  await drain();
  const map = env
    .ofType("kubernetes:core/v1:ConfigMap")
    .find((c) => c.name.endsWith("bridge-settings-configmap"));
  assert.ok(map, "the environment writes the bridge settings");
  const settings = parseBridgeSettings(map.inputs.data[SETTINGS_KEY] as string);

  const bridge = mockPulumi({}, "bridge");
  // The port allocation runs its real provider, so the proxy's objects get real ports.
  withServerSide(async (args) => {
    if (args.type !== PORTS_TYPE) return undefined;
    const inputs = args.inputs as PortAllocationInputs;
    const checked = await portAllocationProvider.check({} as PortAllocationInputs, inputs);
    const { id, outs } = await portAllocationProvider.create(checked.inputs!);
    return { id, state: { ...args.inputs, ...outs } };
  });
  // As the bridge lays a consumer namespace's proxy settings onto its flags (programs/bridge/group-targets.ts).
  const target: Target = targetWithSettings(
    {
      kind: "kubernetes",
      kubeconfig: "fake",
      namespace: "klutch-proxies",
      portRange: { from: 30000, to: 30999 },
      serviceType: "LoadBalancer",
    },
    settings,
    `${namespace}/proxy`,
  );
  const path: NetworkPathObject = {
    metadata: { name: "np-1", generation: 1 },
    spec: {
      implementation: "proxy",
      connection: "c",
      consumerNamespace: namespace,
      instanceHost: "10.40.0.50",
      port: 5432,
    },
  };
  const outputs = await groupProgram(`${namespace}/proxy`, [path], target)();
  await valueOf(outputs.problems as pulumi.Output<unknown>);
  await drain();
  await drain();
  return { service: bridge.ofType(SERVICE)[0]!.inputs, policy: bridge.ofType(NETWORK_POLICY)[0]!.inputs };
}

describe("the proxy admits exactly its consumers (mocked cloud stacks to the bridge's Service)", function () {
  this.timeout(60000);

  it("openstack-example: app-2's subnet only, on an internal load balancer", async () => {
    const { service, policy } = await proxyFor(
      "openstack-example",
      stackSettings("openstack-example"),
      "cluster-app-2",
    );
    assert.deepEqual(service.spec.loadBalancerSourceRanges, ["10.42.0.0/24"]);
    assert.equal(
      service.metadata.annotations["service.beta.kubernetes.io/openstack-internal-load-balancer"],
      "true",
    );
    assert.deepEqual(policy.spec.ingress[0].from, [{ ipBlock: { cidr: "10.42.0.0/24" } }]);
  });

  it("aws-example with app-2 on the proxy behind NAT: its NAT addresses only, internet-facing", async () => {
    const config = stackSettings("aws-example");
    config.appClusters[1].networkConnector = { implementation: "proxy" };
    config.appClusters[1].network.egressCidrs = ["198.51.100.10/32", "198.51.100.11/32"];
    const { service, policy } = await proxyFor("aws-example", config, "cluster-app-2");
    assert.deepEqual(service.spec.loadBalancerSourceRanges, ["198.51.100.10/32", "198.51.100.11/32"]);
    assert.equal(
      service.metadata.annotations["service.beta.kubernetes.io/aws-load-balancer-scheme"],
      undefined,
    );
    assert.equal(service.spec.externalTrafficPolicy, "Local");
    assert.deepEqual(policy.spec.ingress[0].from, [
      { ipBlock: { cidr: "198.51.100.10/32" } },
      { ipBlock: { cidr: "198.51.100.11/32" } },
    ]);
  });
});
