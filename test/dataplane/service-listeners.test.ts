import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { LocalClusters } from "../../host/local-clusters";
import { serviceListenersProvider, type ServiceListenersInputs } from "../../network/proxy/service-listeners";
import { runSerialized } from "../helpers/dynamic-provider";
import { eventually, kubectl, kubectlApply, kubectlTry } from "../helpers/kubectl";

const CLUSTER = "svc-listeners";
const NS = "proxy";
const SELECTOR = { "app.kubernetes.io/name": "haproxy", "app.kubernetes.io/instance": "grp" };

async function listen(port = 0): Promise<net.Server & { port: number }> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return Object.assign(server, { port: (server.address() as net.AddressInfo).port });
}
const close = (s: net.Server) => new Promise<void>((resolve) => s.close(() => resolve()));

/**
 * The ServiceListeners provider (network/proxy/service-listeners.ts) against a real API
 * server. The cluster has no node, so its pods stay Pending and the EndpointSlice is written
 * here as the EndpointSlice controller writes one (the Service has no selector, so the
 * controller leaves the slice alone); the provider's own requests, label selectors and
 * judgement are the real ones.
 */
describe("proxy listeners in service: the ServiceListeners provider against a real API server (data plane)", function () {
  this.timeout(3 * 60_000);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-svc-listeners-"));
  const clusters = new LocalClusters(path.join(work, "clusters"));
  const kc = () => clusters.kubeconfigPath(CLUSTER);
  let ports: number[] = [];

  const pod = (name: string, checksum: string) => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: NS, labels: SELECTOR, annotations: { "checksum/config": checksum } },
    spec: { containers: [{ name: "haproxy", image: "docker.io/library/haproxy:2.6.12" }] },
  });
  const slice = (published: number[], endpoints: [string, boolean][]) => ({
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name: "grp-abcde",
      namespace: NS,
      labels: {
        "kubernetes.io/service-name": "grp",
        "endpointslice.kubernetes.io/managed-by": "klutch-test",
      },
    },
    addressType: "IPv4",
    ports: published.map((port) => ({ name: `tcp-${port}`, port, protocol: "TCP" })),
    endpoints: endpoints.map(([name, ready], i) => ({
      addresses: [`10.244.0.${10 + i}`],
      conditions: { ready, serving: ready, terminating: !ready },
      targetRef: { kind: "Pod", name, namespace: NS },
    })),
  });
  const apply = (...objects: object[]) => {
    const result = kubectlApply(kc(), objects.map((o) => JSON.stringify(o)).join("\n---\n"));
    assert.equal(result.status, 0, result.stderr);
  };
  const inputs = (extra: Partial<ServiceListenersInputs> = {}): ServiceListenersInputs => ({
    kubeconfig: fs.readFileSync(kc(), "utf8"),
    namespace: NS,
    service: "grp",
    selector: SELECTOR,
    checksum: "c2",
    ports,
    timeoutMs: 30_000,
    ...extra,
  });

  before(async () => {
    await clusters.up([CLUSTER]);
    kubectl(kc(), ["create", "namespace", NS]);
    // The ServiceAccount admission plugin refuses pods until the controller-manager made this.
    await eventually(
      "the namespace's default ServiceAccount",
      () => kubectlTry(kc(), ["-n", NS, "get", "serviceaccount", "default"]).status === 0,
      60_000,
    );
    // Two port numbers nothing else here uses (nothing listens on them: nothing is dialed).
    const probes = [await listen(), await listen()];
    ports = probes.map((s) => s.port).sort((a, b) => a - b);
    for (const s of probes) await close(s);
    apply(
      pod("grp-old-1", "c1"),
      pod("grp-new-1", "c2"),
      {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "grp", namespace: NS },
        spec: { ports: ports.map((port) => ({ name: `tcp-${port}`, port, protocol: "TCP" })) },
      },
      slice([ports[0]!], [["grp-old-1", true]]),
    );
  });

  after(async () => {
    await clusters.down();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("fails after its timeout naming what it waited for: a pod of the old config still published", async () => {
    await assert.rejects(
      serviceListenersProvider.create(inputs({ timeoutMs: 1_500 })),
      /Service proxy\/grp did not serve the proxy's listeners within 2 s: waiting for ready endpoints of the current config only; still published: grp-old-1/,
    );
  });

  it("waits through the rollout and answers once the new pods publish every port", async () => {
    let done = false;
    const pending = serviceListenersProvider.create(inputs()).finally(() => (done = true));
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal(done, false, "the old pod is still published");

    // The rollout: the old pod terminating, the new one ready, only the first port published yet.
    apply(
      slice(
        [ports[0]!],
        [
          ["grp-old-1", false],
          ["grp-new-1", true],
        ],
      ),
    );
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal(done, false, "the second port is not published yet");

    apply(
      slice(ports, [
        ["grp-old-1", false],
        ["grp-new-1", true],
      ]),
    );
    const { id, outs } = await pending;
    assert.equal(id, `${NS}/grp`);
    assert.deepEqual(outs!.pods, ["grp-new-1"]);
    assert.equal("kubeconfig" in outs!, false, "the kubeconfig is never an output");
  });

  it("diffs only on what changes the listeners: config, ports, Service", async () => {
    const olds = { ...inputs(), pods: ["grp-new-1"] };
    const diff = serviceListenersProvider.diff;
    assert.equal((await diff("x", olds, inputs())).changes, false);
    assert.equal((await diff("x", olds, inputs({ checksum: "c3" }))).changes, true);
    assert.equal((await diff("x", olds, inputs({ ports: [ports[0]!] }))).changes, true);
    assert.equal((await diff("x", olds, inputs({ timeoutMs: 5_000 }))).changes, false);
  });

  it("runs from its serialized form in a plain node process", async () => {
    const out = (await runSerialized(
      serviceListenersProvider,
      `async (p) => (await p.create(${JSON.stringify(inputs())})).outs`,
    )) as { pods?: string[]; error?: string };
    assert.equal(out.error, undefined);
    assert.deepEqual(out.pods, ["grp-new-1"]);
  });
});
