import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Stack } from "@pulumi/pulumi/automation";
import { readLocalClusterNames } from "../../lib/config/stack-file";
import { LocalClusters } from "../../lib/local-clusters";
import { selectStack } from "../../lib/pulumi-runner";
import { LocalCrossplane } from "../../lib/local-clusters/crossplane";
import { XRD_NAME } from "../../lib/network/connector-api";
import { repoRoot, toolchainEnv } from "../../lib/toolchain";
import { eventually, kubectl, kubectlApply, kubectlJson, kubectlTry } from "../helpers/kubectl";

function listFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? listFiles(p) : [p];
  });
}

/**
 * The foundation end to end: real local API servers, the real Pulumi CLI and engine, the
 * `local` stack as committed. Creates, checks through the API servers, expects a no-op
 * second run, destroys, and leaves no process behind.
 */
describe("local stack on real clusters (e2e)", function () {
  this.timeout(15 * 60_000);

  const names = readLocalClusterNames("local");
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-e2e-"));
  const stateDir = path.join(work, "clusters");
  const saved = { ...process.env };
  let clusters: LocalClusters;
  let crossplane: LocalCrossplane | undefined;
  let stack: Stack;
  const log: string[] = [];
  const onOutput = (s: string) => log.push(s);
  const stackFile = path.join(repoRoot, "stacks", "Pulumi.local.yaml");
  const stackFileBefore = fs.readFileSync(stackFile, "utf8");

  before(async () => {
    process.env.KLUTCH_LOCAL_DIR = stateDir;
    process.env.PULUMI_BACKEND_URL = `file://${path.join(work, "state")}`;
    clusters = new LocalClusters(stateDir);
    await clusters.up(names);
    stack = await selectStack({ stack: "local" });
  });

  after(async () => {
    try {
      if (clusters) await clusters.down();
    } finally {
      process.env = saved;
    }
    const leftovers = clusters ? clusters.leftoverProcesses() : [];
    fs.rmSync(work, { recursive: true, force: true });
    assert.deepEqual(leftovers, [], "local cluster processes left behind");
  });

  const kubeconfig = (cluster: string) => clusters.kubeconfigPath(cluster);

  it("uses the stack's control plane and app clusters", () => {
    assert.deepEqual(names, ["control-plane", "app-1", "app-2"]);
  });

  let created = 0;

  it("`pulumi up` creates the environment through the real engine", async () => {
    const res = await stack.up({ onOutput });
    assert.equal(res.summary.result, "succeeded");
    created = res.summary.resourceChanges?.create ?? 0;
    // stack, environment, 3 clusters with their providers, 4 namespaces, Crossplane and its children
    assert.ok(created > 12, `only ${created} resources created:\n${log.join("")}`);
    assert.deepEqual(res.outputs.appClusters?.value, ["app-1", "app-2"]);
  });

  it("installs Crossplane on the control plane only: CRDs, core with SSA claims, pinned packages", () => {
    const cp = kubeconfig("control-plane");
    for (const crd of [
      "providers.pkg.crossplane.io",
      "compositeresourcedefinitions.apiextensions.crossplane.io",
    ]) {
      assert.equal(kubectlJson(cp, ["get", "crd", crd]).metadata.name, crd);
    }
    const deploy = kubectlJson(cp, ["-n", "crossplane-system", "get", "deployment", "crossplane"]);
    assert.ok(deploy.spec.template.spec.containers[0].args.includes("--enable-ssa-claims"));
    assert.match(deploy.spec.template.spec.containers[0].image, /:v1\.20\.1$/);
    const provider = kubectlJson(cp, ["get", "providers.pkg.crossplane.io", "provider-kubernetes"]);
    assert.match(provider.spec.package, /provider-kubernetes:v\d/);
    assert.notEqual(kubectlTry(kubeconfig("app-1"), ["get", "crd", "providers.pkg.crossplane.io"]).status, 0);
  });

  it("local Crossplane core establishes the XTCPConnection XRD and serves its claim", async () => {
    crossplane = new LocalCrossplane(stateDir, "control-plane", toolchainEnv());
    await crossplane.start();
    const cp = kubeconfig("control-plane");
    const established = () =>
      kubectlJson(cp, ["get", "xrd", XRD_NAME]).status?.conditions?.find((c: any) => c.type === "Established")
        ?.status;
    await eventually("the XRD to be established", () => established() === "True", 90_000);
    for (const crd of ["xtcpconnections.klutch.anynines.com", "tcpconnections.klutch.anynines.com"]) {
      assert.equal(kubectlJson(cp, ["get", "crd", crd]).spec.group, "klutch.anynines.com");
    }
    assert.deepEqual(
      kubectlJson(cp, ["get", "compositions"])
        .items.map((c: any) => c.metadata.name)
        .sort(),
      ["xtcpconnections-noop", "xtcpconnections-proxy"],
    );
  });

  it("the API server accepts the seed's connection and rejects invalid ones, naming the field", () => {
    const cp = kubeconfig("control-plane");
    const connection = (spec: string) =>
      `apiVersion: klutch.anynines.com/v1\nkind: TCPConnection\nmetadata: {name: c, namespace: klutch-network}\nspec:\n${spec}`;
    const seed = connection(
      [
        "  instanceHost: pg.example.internal",
        "  port: 5432",
        "  enhancements:",
        "    - InstanceType: PostgreSQL",
        "    - {ConnectionType: wireguardVPN, vpnEndpoint: 'vpn.example.com:51820', clientIP: 100.96.0.5}",
        "    - {ConnectionType: istioMesh, meshID: mesh1}",
        "    - {ConnectionType: awsVPCPeering, instanceVPC: vpc-0abc, appClusterVPC: vpc-0def}",
        "",
      ].join("\n"),
    );
    const ok = kubectlApply(cp, seed, true);
    assert.equal(ok.status, 0, ok.stderr);
    const rejected: [string, RegExp][] = [
      ["  instanceHost: h\n  port: 0\n", /spec\.port: Invalid value: 0: .*greater than or equal to 1/],
      [
        "  instanceHost: h\n  port: 65536\n",
        /spec\.port: Invalid value: 65536: .*less than or equal to 65535/,
      ],
      ["  port: 5432\n", /spec\.instanceHost: Required value/],
      [
        "  instanceHost: h\n  port: 5432\n  enhancements:\n    - ConnectionType: carrierPigeon\n",
        /spec\.enhancements\[0\]\.ConnectionType: Unsupported value: "carrierPigeon"/,
      ],
      [
        "  instanceHost: h\n  port: 5432\n  enhancements:\n    - ConnectionType: wireguardVPN\n",
        /spec\.enhancements\[0\].*vpnEndpoint is required for ConnectionType wireguardVPN/,
      ],
      [
        "  instanceHost: h\n  port: 5432\n  enhancements:\n    - Carrier: pigeon\n",
        /unknown field "spec\.enhancements\[0\]\.Carrier"/,
      ],
    ];
    for (const [spec, message] of rejected) {
      const r = kubectlApply(cp, connection(spec), true);
      assert.notEqual(r.status, 0, `accepted:\n${spec}`);
      assert.match(r.stderr, message);
    }
  });

  it("a NOOP connection is composed by Crossplane and becomes Ready without a network path", async () => {
    const cp = kubeconfig("control-plane");
    const r = kubectlApply(
      cp,
      [
        "apiVersion: klutch.anynines.com/v1",
        "kind: TCPConnection",
        "metadata: {name: opted-out, namespace: klutch-network}",
        "spec:",
        "  instanceHost: pg.example.internal",
        "  port: 5432",
        "  compositionSelector: {matchLabels: {klutch.anynines.com/implementation: noop}}",
        "",
      ].join("\n"),
    );
    assert.equal(r.status, 0, r.stderr);
    const ready = () =>
      kubectlJson(cp, ["-n", "klutch-network", "get", "tcpconnection", "opted-out"]).status?.conditions?.find(
        (c: any) => c.type === "Ready",
      )?.status;
    await eventually("the NOOP connection to be Ready", () => ready() === "True", 90_000);
    assert.equal(
      kubectlJson(cp, ["get", "networkpaths", "-A"]).items.length,
      0,
      "NOOP creates no network path",
    );
    // Clean up before destroy removes the XRD underneath it.
    kubectl(cp, [
      "-n",
      "klutch-network",
      "delete",
      "tcpconnection",
      "opted-out",
      "--wait=true",
      "--timeout=60s",
    ]);
  });

  it("the namespaces exist on the right API servers, labelled with the environment", () => {
    const expected: Record<string, string[]> = {
      "control-plane": ["crossplane-system", "bind", "klutch-network"],
      "app-1": ["klutch-bind"],
      "app-2": ["klutch-bind"],
    };
    for (const [cluster, namespaces] of Object.entries(expected)) {
      for (const ns of namespaces) {
        const obj = kubectlJson(kubeconfig(cluster), ["get", "namespace", ns]);
        assert.equal(obj.metadata.labels["klutch.anynines.com/environment"], "local");
        assert.equal(obj.metadata.labels["app.kubernetes.io/managed-by"], "pulumi");
      }
    }
    // And nowhere else: an app cluster has no control plane namespaces.
    assert.notEqual(kubectlTry(kubeconfig("app-1"), ["get", "namespace", "bind"]).status, 0);
    assert.notEqual(kubectlTry(kubeconfig("control-plane"), ["get", "namespace", "klutch-bind"]).status, 0);
  });

  it("`pulumi preview --expect-no-changes` passes and a second `up` changes nothing", async () => {
    const preview = await stack.preview({ expectNoChanges: true });
    assert.deepEqual(Object.keys(preview.changeSummary), ["same"]);
    const res = await stack.up();
    assert.deepEqual(Object.keys(res.summary.resourceChanges ?? {}), ["same"]);
  });

  it("keeps every kubeconfig out of the state in plain text", () => {
    // The state at rest: every file of the file backend (the Automation API's exportStack
    // would decrypt secrets, so the files themselves are read).
    const files = listFiles(path.join(work, "state"));
    assert.ok(
      files.some((f) => f.endsWith("local.json")),
      `no stack state among ${files.join(", ")}`,
    );
    const state = files.map((f) => fs.readFileSync(f, "utf8")).join("\n");
    for (const cluster of names) {
      const text = fs.readFileSync(kubeconfig(cluster), "utf8");
      for (const field of ["client-key-data", "client-certificate-data"]) {
        const value = new RegExp(`${field}: (\\S+)`).exec(text)?.[1];
        assert.ok(value, `kubeconfig of ${cluster} has ${field}`);
        assert.ok(
          !state.includes(value.slice(0, 64)),
          `${field} of ${cluster} appears in the state in plain text`,
        );
      }
    }
    assert.ok(state.includes("ciphertext"), "the state holds the kubeconfigs encrypted");
  });

  it("`pulumi destroy` removes everything it created", async () => {
    const res = await stack.destroy({ onOutput });
    assert.equal(res.summary.result, "succeeded");
    assert.equal(res.summary.resourceChanges?.delete, created, log.join(""));
    // Namespace deletion is finalised by the real namespace controller.
    await eventually("namespaces to be gone", () =>
      ["crossplane-system", "bind", "klutch-network"].every(
        (ns) => kubectlTry(kubeconfig("control-plane"), ["get", "namespace", ns]).status !== 0,
      ),
    );
    const state = await stack.exportStack();
    assert.equal((state.deployment as { resources?: unknown[] }).resources?.length ?? 0, 0);
    // Keep the committed stack file: `stack rm` deletes it unless told otherwise.
    await stack.workspace.removeStack("local", { preserveConfig: true });
  });

  it("leaves the committed stack file exactly as it was", () => {
    assert.equal(fs.readFileSync(stackFile, "utf8"), stackFileBefore);
  });
});
