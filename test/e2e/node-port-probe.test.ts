import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { LocalClusters } from "../../host/local-clusters";
import type { EnvironmentConfig } from "../../lib/config/schema";
import { proxyServerCheck } from "../../network/proxy/server-check";
import { eventually, kubectl, kubectlApply, kubectlJson } from "../helpers/kubectl";

const CLUSTER = "node-port-probe";

/** What the proxy's server check reads of a config: an existing control plane, NodePort proxies. */
const configWith = (kubeconfig: string, ...ranges: [number, number][]) =>
  ({
    controlPlane: { name: "ops-cp", infrastructure: "existing", kubeconfig: { path: kubeconfig } },
    appClusters: ranges.map(([from, to], i) => ({
      name: `app-${i}`,
      networkConnector: { implementation: "proxy", serviceType: "NodePort", portRange: { from, to } },
    })),
  }) as unknown as EnvironmentConfig;

const nodePortService = (name: string, nodePort: number) =>
  JSON.stringify({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: "default" },
    spec: { type: "NodePort", ports: [{ port: 80, nodePort }] },
  });

/**
 * The proxy's node-port question on a real kube-apiserver (its default range, 30000-32767),
 * handed over by kubeconfig as an existing cluster is: a range outside is refused naming field,
 * value and the cluster's own range; one inside, or one whose ports are already taken, is not;
 * nothing is left behind. And why the question is a create, not a dry-run.
 */
describe("NodePort ranges asked of a real API server (e2e)", function () {
  this.timeout(5 * 60_000);
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-node-port-probe-"));
  const clusters = new LocalClusters(stateDir);
  const kc = () => clusters.kubeconfigPath(CLUSTER);
  const services = () =>
    kubectlJson<{ items: { metadata: { name: string } }[] }>(kc(), ["-n", "default", "get", "services"])
      .items.map((s) => s.metadata.name)
      .sort();

  before(async () => {
    await clusters.up([CLUSTER]);
  });

  after(async () => {
    await clusters.down();
    fs.rmSync(stateDir, { recursive: true, force: true });
  });

  it("a server-side dry-run does not check the range (upstream's dry-run allocator): node port 5000 is accepted, so the check cannot be one", () => {
    const r = kubectlApply(kc(), nodePortService("dry", 5000), true);
    assert.equal(r.status, 0, r.stderr);
    const real = kubectlApply(kc(), nodePortService("real", 5000));
    assert.notEqual(real.status, 0);
    assert.match(
      real.stderr,
      /provided port is not in the valid range\. The range of valid ports is 30000-32767/,
    );
    assert.deepEqual(services(), ["kubernetes"]);
  });

  it("refuses a range outside the cluster's, naming the field, the value and the range its API server takes; leaves nothing", async () => {
    const text = fs.readFileSync(kc(), "utf8");
    const config = configWith(kc(), [30000, 30099], [5000, 5100]);
    const answers = await proxyServerCheck({ config, kubeconfig: text, preview: false });
    assert.deepEqual(answers.notes, []);
    assert.equal(answers.issues.length, 1, JSON.stringify(answers.issues));
    assert.equal(answers.issues[0]!.path, "klutch:appClusters[1].networkConnector.portRange");
    assert.match(
      answers.issues[0]!.message,
      /^5000-5100 is outside the node ports of the data-service cluster ops-cp: its API server takes 30000-32767/,
    );
    assert.deepEqual(services(), ["kubernetes"], "the probes are gone");
    // A preview does not ask it: the question is a create, which a preview must not make.
    assert.deepEqual(await proxyServerCheck({ config, kubeconfig: text, preview: true }), {
      issues: [],
      notes: [],
    });
  });

  it("a range whose ports are taken (the proxy's own, on a second up) is no refusal: a note, nothing else", async () => {
    assert.equal(kubectlApply(kc(), nodePortService("holder", 30500)).status, 0);
    const text = fs.readFileSync(kc(), "utf8");
    const answers = await proxyServerCheck({
      config: configWith(kc(), [30500, 30599]),
      kubeconfig: text,
      preview: false,
    });
    assert.deepEqual(answers.issues, []);
    assert.equal(answers.notes.length, 1);
    assert.match(answers.notes[0]!, /provided port is already allocated/);
    assert.deepEqual(services(), ["holder", "kubernetes"]);
  });

  it("a Service type the cluster's admission refuses (a ValidatingAdmissionPolicy against LoadBalancers) is refused naming the field, the type and the policy's words, by a dry-run that leaves nothing; one it admits is not", async () => {
    const policy = "klutch-e2e-no-load-balancers";
    const manifests = [
      {
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: "ValidatingAdmissionPolicy",
        metadata: { name: policy },
        spec: {
          failurePolicy: "Fail",
          matchConstraints: {
            resourceRules: [
              {
                apiGroups: [""],
                apiVersions: ["v1"],
                operations: ["CREATE", "UPDATE"],
                resources: ["services"],
              },
            ],
          },
          validations: [
            {
              expression: "object.spec.type != 'LoadBalancer'",
              message: "LoadBalancer Services are not allowed on this cluster",
            },
          ],
        },
      },
      {
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: "ValidatingAdmissionPolicyBinding",
        metadata: { name: policy },
        spec: { policyName: policy, validationActions: ["Deny"] },
      },
    ];
    for (const m of manifests) assert.equal(kubectlApply(kc(), JSON.stringify(m)).status, 0);
    const lb = JSON.stringify({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "lb", namespace: "default" },
      spec: { type: "LoadBalancer", ports: [{ port: 80 }] },
    });
    // The API server compiles a new policy before it enforces it.
    await eventually(
      "the policy to refuse a LoadBalancer",
      () => kubectlApply(kc(), lb, true).status !== 0,
      30_000,
    );
    // Ports the dry-run Service names; a dry-run allocates none.
    const ranges: [number, number][] = [
      [30700, 30799],
      [30800, 30899],
    ];
    const config = {
      controlPlane: { name: "ops-cp", infrastructure: "existing", kubeconfig: { path: kc() } },
      appClusters: (["NodePort", "LoadBalancer"] as const).map((serviceType, i) => ({
        name: `app-${i}`,
        infrastructure: "existing",
        networkConnector: {
          implementation: "proxy",
          serviceType,
          portRange: { from: ranges[i]![0], to: ranges[i]![1] },
          allowedSources: ["10.20.0.0/16"],
        },
      })),
    } as unknown as EnvironmentConfig;
    const text = fs.readFileSync(kc(), "utf8");
    const answers = await proxyServerCheck({ config, kubeconfig: text, preview: false });
    assert.deepEqual(answers.notes, []);
    assert.equal(answers.issues.length, 1, JSON.stringify(answers.issues));
    assert.equal(answers.issues[0]!.path, "klutch:appClusters[1].networkConnector.serviceType");
    assert.match(
      answers.issues[0]!.message,
      /^LoadBalancer: the data-service cluster ops-cp refuses the proxy's LoadBalancer Service \(a server-side dry-run of it was denied: .*ValidatingAdmissionPolicy 'klutch-e2e-no-load-balancers' .*denied request: LoadBalancer Services are not allowed on this cluster\); choose a serviceType/,
    );
    assert.deepEqual(services(), ["holder", "kubernetes"], "a dry-run makes nothing");
    // A dry-run writes nothing, so a preview asks it too and is refused the same (but for the
    // probe Service's random name).
    const probeNamed = (issues: typeof answers.issues) =>
      issues.map((i) => ({ ...i, message: i.message.replace(/admission-probe-\w+/, "admission-probe-*") }));
    assert.deepEqual(
      probeNamed((await proxyServerCheck({ config, kubeconfig: text, preview: true })).issues),
      probeNamed(answers.issues),
    );
    for (const kind of ["validatingadmissionpolicybinding", "validatingadmissionpolicy"])
      kubectl(kc(), ["delete", kind, policy]);
    await eventually("the policy gone", () => kubectlApply(kc(), lb, true).status === 0, 30_000);
    assert.deepEqual((await proxyServerCheck({ config, kubeconfig: text, preview: false })).issues, []);
  });
});
