import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Stack } from "@pulumi/pulumi/automation";
import { readLocalClusterNames } from "../../tooling/stack-file";
import { LocalClusters } from "../../local-clusters";
import { pulumiEnv, selectStack } from "../../tooling/pulumi-runner";
import { LocalCrossplane } from "../../local-clusters/crossplane";
import { XRD_NAME } from "../../network/connector-api/xrd";
import { repoRoot, toolchainEnv } from "../../tooling/toolchain";
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

  it("a NOOP connection is composed by Crossplane and stays Ready and Synced without a realised network path", async () => {
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
    await eventually("the NOOP connection to be Ready", () => ready() === "True", 90_000).catch(
      (e: Error) => {
        const claim = kubectlJson(cp, ["-n", "klutch-network", "get", "tcpconnection", "opted-out"]);
        const xrs = kubectlJson(cp, ["get", "xtcpconnections"]).items.map((x: any) => [
          x.metadata.name,
          x.status,
        ]);
        const log = crossplane
          ? fs
              .readFileSync(crossplane.logFile, "utf8")
              .split("\n")
              .filter((l) => /error|warn/i.test(l))
              .slice(-15)
              .join("\n")
          : "";
        throw new Error(
          `${e.message}\nclaim: ${JSON.stringify(claim.status)}\nXRs: ${JSON.stringify(xrs)}\n${log}`,
        );
      },
    );
    // Resources mode needs one composed resource: an inert NetworkPath the bridge ignores.
    const paths = kubectlJson(cp, ["get", "networkpaths"]).items;
    assert.deepEqual(
      paths.map((p: any) => [p.spec.implementation, p.spec.instanceHost, p.spec.consumerNamespace]),
      [["noop", "pg.example.internal", "klutch-network"]],
    );
    assert.equal(paths[0].status, undefined, "nothing realises a NOOP path");
    // A later reconcile reads the composed resource back; it must stay Synced (a namespaced
    // marker failed here with Crossplane 1.x).
    const xrName = kubectlJson(cp, ["-n", "klutch-network", "get", "tcpconnection", "opted-out"]).spec
      .resourceRef.name;
    kubectl(cp, ["annotate", "xtcpconnection", xrName, "klutch.test/poke=1", "--overwrite"]);
    const xrCondition = (type: string) =>
      kubectlJson(cp, ["get", "xtcpconnection", xrName]).status?.conditions?.find(
        (c: any) => c.type === type,
      );
    // Crossplane may report one transient error on a reconcile (seen once under load: a composed
    // name collision its next poll resolves); what must not happen is that it stays unsynced.
    const synced = () => xrCondition("Synced")?.status === "True" && xrCondition("Ready")?.status === "True";
    const deadline = Date.now() + 30_000;
    await new Promise((r) => setTimeout(r, 3000));
    while (!synced() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 1000));
    assert.equal(xrCondition("Synced")?.status, "True", JSON.stringify(xrCondition("Synced")));
    assert.equal(xrCondition("Ready")?.status, "True");
    // And it holds across the next poll (Crossplane polls every 5 s locally).
    await new Promise((r) => setTimeout(r, 6000));
    assert.equal(xrCondition("Synced")?.status, "True", JSON.stringify(xrCondition("Synced")));
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

  it("installs the klutch-bind backend: CRDs the API server validates, export templates, Dex", () => {
    const cp = kubeconfig("control-plane");
    for (const crd of [
      "apiserviceexportrequests.klutch.anynines.com",
      "apiserviceexports.klutch.anynines.com",
      "apiservicebindings.klutch.anynines.com",
      "apiservicenamespaces.klutch.anynines.com",
      "clusterbindings.klutch.anynines.com",
      "apiserviceexporttemplates.example-backend.klutch.anynines.com",
    ]) {
      kubectl(cp, ["wait", "--for=condition=Established", `crd/${crd}`, "--timeout=60s"]);
    }
    // One template per exported API, accepted by the API server through the real schema.
    const templates = kubectlJson<{
      items: { metadata: { name: string }; spec: { permissionClaims?: { resource: string }[] } }[];
    }>(cp, ["-n", "crossplane-system", "get", "apiserviceexporttemplates"]);
    assert.deepEqual(templates.items.map((t) => t.metadata.name).sort(), [
      "backups",
      "postgresqlinstances",
      "restores",
      "servicebindings",
    ]);
    const sb = templates.items.find((t) => t.metadata.name === "servicebindings");
    assert.deepEqual(
      sb?.spec.permissionClaims?.map((c) => c.resource),
      ["secrets", "configmaps"],
    );
    // The schema is real (v1.4.0's): a selector without its resource is refused, naming the field.
    const bad = kubectlApply(
      cp,
      JSON.stringify({
        apiVersion: "example-backend.klutch.anynines.com/v1alpha1",
        kind: "APIServiceExportTemplate",
        metadata: { name: "no-resource", namespace: "crossplane-system" },
        spec: { APIServiceSelector: { group: "anynines.com" } },
      }),
      true,
    );
    assert.notEqual(bad.status, 0, "a selector without a resource must be rejected");
    assert.match(bad.stderr, /APIServiceSelector\.resource/);

    // Backend and Dex workloads with their identities; RBAC without cluster-admin.
    for (const [kind, name] of [
      ["deployment", "klutch-bind-backend"],
      ["deployment", "dex"],
      ["service", "klutch-bind-backend"],
      ["service", "dex"],
      ["serviceaccount", "klutch-bind-backend"],
      ["ingress", "klutch-bind-backend"],
      ["secret", "klutch-bind-backend"],
      ["secret", "dex-config"],
    ] as const) {
      kubectl(cp, ["-n", "bind", "get", kind, name]);
    }
    const binding = kubectlJson<{ roleRef: { name: string } }>(cp, [
      "get",
      "clusterrolebinding",
      "klutch-bind-backend",
    ]);
    assert.equal(binding.roleRef.name, "klutch-bind-backend");
    // The backend's identity may do what it does and no more.
    const can = (verb: string, resource: string, ns?: string) =>
      kubectlTry(cp, [
        "auth",
        "can-i",
        verb,
        resource,
        "--as=system:serviceaccount:bind:klutch-bind-backend",
        ...(ns ? ["-n", ns] : []),
      ]).status === 0;
    assert.ok(can("create", "apiserviceexports.klutch.anynines.com", "cluster-abc"));
    assert.ok(can("create", "namespaces"));
    assert.ok(can("update", "configmaps", "cluster-abc"), "it holds the claims it grants");
    assert.ok(!can("create", "deployments.apps", "kube-system"), "no workload writes");
    assert.ok(!can("escalate", "clusterroles"), "no escalate");
    assert.ok(!can("bind", "clusterroles"), "no bind: it holds what it grants instead");
    assert.ok(!can("create", "nodes"), "no cluster infrastructure writes");
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

  it("keeps generated secrets (cookie keys, OIDC client secret) out of `pulumi stack export`", () => {
    const cp = kubeconfig("control-plane");
    const { data } = kubectlJson<{ data: Record<string, string> }>(cp, [
      "-n",
      "bind",
      "get",
      "secret",
      "klutch-bind-backend",
    ]);
    const generated = ["COOKIE_SIGNING_KEY", "COOKIE_ENCRYPTION_KEY", "OIDC_CLIENT_SECRET"].map((k) =>
      Buffer.from(data[k] ?? "", "base64").toString("utf8"),
    );
    // The backend accepts these sizes only (base64 of 32 bytes; a hex client secret).
    assert.equal(Buffer.from(generated[0]!, "base64").length, 32);
    assert.equal(Buffer.from(generated[1]!, "base64").length, 32);
    assert.match(generated[2]!, /^[0-9a-f]{64}$/);
    const exported = execFileSync("pulumi", ["stack", "export", "--stack", "local"], {
      cwd: repoRoot,
      env: pulumiEnv("local"),
      maxBuffer: 512 * 1024 * 1024,
    }).toString();
    assert.ok(exported.includes("klutch:RandomKey"), "the export holds the generated keys' resources");
    const onDisk = listFiles(path.join(work, "state"))
      .map((f) => fs.readFileSync(f, "utf8"))
      .join("\n");
    for (const value of generated) {
      assert.ok(!exported.includes(value), "a generated secret appears in `pulumi stack export`");
      assert.ok(!onDisk.includes(value), "a generated secret appears in the state files");
    }
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
