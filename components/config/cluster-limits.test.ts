import { strict as assert } from "node:assert";
import { renderIssues } from "../../lib/config/messages";
import { validateEnvironment } from "./validate";
import { fakeKubeconfig, fakeValidationContext } from "../../test/helpers/kubeconfig";

/**
 * Settings the target cluster's API server or node would refuse later are refused at
 * validation time, naming the field, the value and the range the cluster accepts.
 */
const files = {
  "/project/.klutch/local/control-plane/kubeconfig": fakeKubeconfig("control-plane"),
  "/project/.klutch/local/app-1/kubeconfig": fakeKubeconfig("app-1"),
  "/project/kube/prod.yaml": fakeKubeconfig("prod"),
};

function issues(raw: Record<string, unknown>): { path: string; message: string }[] {
  const result = validateEnvironment(raw, fakeValidationContext(files));
  return result.ok ? [] : result.issues;
}

const config = (controlPlane: Record<string, unknown>, app: Record<string, unknown>) => ({
  environment: "local",
  controlPlane: { name: "control-plane", infrastructure: "local", ...controlPlane },
  appClusters: [{ name: "app-1", infrastructure: "local", ...app }],
});

const nodePortProxy = (from: number, to: number) => ({
  networkConnector: {
    implementation: "proxy",
    serviceType: "NodePort",
    portRange: { from, to },
    allowedSources: ["10.0.0.0/8"],
  },
});

describe("validation against what the cluster accepts", () => {
  it("refuses a NodePort proxy's port range outside the data-service cluster's node ports", () => {
    const found = issues(config({}, nodePortProxy(22000, 22999)));
    const issue = found.find((i) => i.path === "klutch:appClusters[0].networkConnector.portRange");
    assert.ok(issue, renderIssues(found, "test"));
    assert.match(
      issue.message,
      /^22000-22999 is outside the node ports of the data-service cluster control-plane \(30000-32767: /,
    );
    assert.match(issue.message, /choose a range within 30000-32767$/);
  });

  it("refuses a range that only starts inside it, and accepts one wholly inside", () => {
    assert.ok(issues(config({}, nodePortProxy(32700, 32799))).some((i) => i.path.endsWith("portRange")));
    assert.deepEqual(issues(config({}, nodePortProxy(31000, 31999))), []);
    // ClusterIP and LoadBalancer Services take no node port from the range.
    const lb = nodePortProxy(22000, 22999);
    (lb.networkConnector as Record<string, unknown>).serviceType = "ClusterIP";
    assert.deepEqual(issues(config({}, lb)), []);
  });

  it("leaves the range alone where only the cluster's flags know it (an existing cluster)", () => {
    const raw = config(
      { infrastructure: "existing", kubeconfig: { path: "kube/prod.yaml" } },
      nodePortProxy(22000, 22999),
    );
    assert.ok(!issues(raw).some((i) => i.path.endsWith("portRange")), renderIssues(issues(raw), "test"));
  });

  it("refuses a local cluster's Service range other than the one its API server serves", () => {
    const found = issues(
      config({ network: { nodeCidr: "192.168.50.0/24", serviceCidr: "10.100.0.0/16" } }, {}),
    );
    const issue = found.find((i) => i.path === "klutch:controlPlane.network.serviceCidr");
    assert.ok(issue, renderIssues(found, "test"));
    assert.match(issue.message, /^10.100.0.0\/16 is not the local clusters' Service range: .* 10.96.0.0\/16/);
    assert.deepEqual(
      issues(config({ network: { nodeCidr: "192.168.50.0/24", serviceCidr: "10.96.0.0/16" } }, {})),
      [],
    );
  });

  it("refuses a local pod CIDR over the Service range or the nodes' links", () => {
    for (const [podCidr, what] of [
      ["10.96.128.0/24", "Service range"],
      ["172.30.4.0/24", "links to this machine"],
    ] as const) {
      const found = issues(config({}, { network: { nodeCidr: "192.168.60.0/24", podCidr } }));
      const issue = found.find((i) => i.path === "klutch:appClusters[0].network.podCidr");
      assert.ok(issue && issue.message.includes(what), `${podCidr}: ${renderIssues(found, "test")}`);
    }
    assert.deepEqual(
      issues(config({}, { network: { nodeCidr: "192.168.60.0/24", podCidr: "10.245.0.0/24" } })),
      [],
    );
  });
});
