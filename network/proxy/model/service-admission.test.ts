import { strict as assert } from "node:assert";
import { admissionIssue, admissionProbes } from "./service-admission";

const app = (connector: Record<string, unknown>) => ({
  name: "app",
  infrastructure: "existing" as const,
  networkConnector: { implementation: "proxy", portRange: { from: 30100, to: 30199 }, ...connector },
});
const config = (apps: unknown[], kubeconfig: unknown = { path: "cp.yaml" }) =>
  ({
    controlPlane: { name: "ops-cp", ...(kubeconfig ? { kubeconfig } : {}) },
    appClusters: apps,
  }) as unknown as Parameters<typeof admissionProbes>[0];

describe("the proxy's Service asked of an existing cluster's admission (pure)", () => {
  it("asks per proxy app cluster, with the Service's type, exposure annotations, source ranges and traffic policy as the environment makes them", () => {
    const [lb, np] = admissionProbes(
      config([
        app({ serviceType: "LoadBalancer", allowedSources: ["10.20.0.0/16"] }),
        app({ serviceType: "NodePort", publicEndpoint: true }),
        { name: "w", infrastructure: "existing", networkConnector: { implementation: "wireguard" } },
      ]),
    );
    assert.deepEqual(lb!.at, ["appClusters", 0, "networkConnector", "serviceType"]);
    const spec = lb!.service.spec as Record<string, unknown>;
    assert.equal(spec.type, "LoadBalancer");
    assert.deepEqual(spec.loadBalancerSourceRanges, ["10.20.0.0/16"]);
    assert.equal(spec.externalTrafficPolicy, "Local");
    assert.deepEqual(spec.ports, [{ name: "p0", port: 30100, targetPort: 30100, protocol: "TCP" }]);
    const meta = np!.service.metadata as { generateName: string; annotations?: Record<string, string> };
    assert.equal(meta.generateName, "klutch-proxy-admission-probe-", "never an operator's object");
    assert.equal(meta.annotations?.["klutch.anynines.com/public-endpoint"], "true");
  });

  it("asks nothing of a control plane the project makes (no kubeconfig), nor for an app cluster validation refuses", () => {
    assert.deepEqual(
      admissionProbes(config([app({ serviceType: "LoadBalancer", allowedSources: ["10.0.0.0/8"] })], null)),
      [],
    );
    assert.deepEqual(admissionProbes(config([app({ serviceType: "LoadBalancer" })])), [], "no exposure");
  });

  it("a policy's or a webhook's denial names the field and the words; any other answer is no verdict", () => {
    const [probe] = admissionProbes(
      config([app({ serviceType: "NodePort", allowedSources: ["10.0.0.0/8"] })]),
    );
    const vap = admissionIssue(
      probe!,
      `services "klutch-proxy-admission-probe-x" is forbidden: ValidatingAdmissionPolicy 'no-np' with binding 'no-np' denied request: NodePorts are not allowed`,
    );
    assert.equal(vap?.path, "klutch:appClusters[0].networkConnector.serviceType");
    assert.match(
      vap.message,
      /^NodePort: the data-service cluster ops-cp refuses the proxy's NodePort Service .*NodePorts are not allowed\); choose a serviceType/,
    );
    assert.ok(admissionIssue(probe!, `admission webhook "policy.example.com" denied the request: no`));
    assert.equal(
      admissionIssue(probe!, `services is forbidden: User "dev" cannot create resource "services"`),
      undefined,
    );
    assert.equal(admissionIssue(probe!, "connect ECONNREFUSED 127.0.0.1:6443"), undefined);
  });
});
