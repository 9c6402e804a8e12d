import { strict as assert } from "node:assert";
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { parseAllDocuments } from "yaml";
import { repoRoot } from "../../host/automation/toolchain";
import { functionApp } from "../../host/local-clusters/images/function-image";
import {
  KLUTCH_FUNCTION,
  pulumiBackedComposition,
  renderPipeline,
} from "../../lib/connector-api/compositions";
import {
  CONNECTOR_GROUP,
  CONNECTOR_VERSION,
  NETWORK_PATH_API_VERSION,
  XR_KIND,
} from "../../lib/connector-api/names";
import { roleName } from "../../programs/composition-function/binding-roles";
import { FUNCTION_NAME, INPUT_API_VERSION } from "../../programs/composition-function/input";
import {
  a8sNetworkServiceBindingComposition,
  a9sNetworkServiceBindingComposition,
  localPostgresqlComposition,
} from "../../lib/dataservices/compositions";
import { a8sBindingManifest } from "../helpers/a8s-stand-in";
import { stopChild } from "../helpers/child-process";
import { runCli } from "../helpers/crossplane-cli";

/** Objects parsed from the CLI's YAML. */
type Json = any;

const COMPOSITION_RESOURCE_NAME = "crossplane.io/composition-resource-name";

/**
 * A port nobody listens on now, from the kernel's ephemeral range: the function server binds it
 * right after, on loopback only, so it can meet no other test file's fixed ports.
 */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Resolves once something accepts connections on 127.0.0.1:`port`; rejects when `child` exits first or time is up. */
async function listening(port: number, child: ChildProcess, log: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(
        `the function exited (${child.exitCode ?? child.signalCode}):\n${fs.readFileSync(log, "utf8")}`,
      );
    const up = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (up) return;
    if (Date.now() > deadline)
      throw new Error(`the function did not listen within ${timeoutMs} ms:\n${fs.readFileSync(log, "utf8")}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * The function's main.js as its image holds it (functionApp, which the image's layer is made of),
 * in a folder under the repository so that Node.js finds the SDK in node_modules as the image's
 * /app does.
 */
function functionMain(): string {
  return functionApp(repoRoot, path.join(repoRoot, ".klutch", "function-render")).main;
}

/**
 * programs/composition-function/ as a real gRPC server, called by the real `crossplane render` of the
 * toolchain's Crossplane (1.20.11) through render's Development runtime (it dials the address in
 * the Function's annotations, without TLS, instead of pulling and running a package): the
 * project's production composition, with this function as its one step, rendered against an
 * XTCPConnection before and after its NetworkPath is observed Ready.
 */
describe("composition function under `crossplane render` (e2e)", function () {
  this.timeout(120_000);

  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-function-render-"));
  const log = path.join(work, "function.log");
  let child: ChildProcess | undefined;
  let port = 0;

  before(async () => {
    port = await freePort();
    // The log goes to a file, not a pipe: nothing here reads a pipe while render runs
    // synchronously, and a full pipe would stall the server.
    const out = fs.openSync(log, "w");
    try {
      child = spawn(process.execPath, [functionMain(), "--insecure", `--address=127.0.0.1:${port}`], {
        cwd: repoRoot,
        stdio: ["ignore", out, out],
      });
    } finally {
      fs.closeSync(out);
    }
    await listening(port, child, log, 60_000);
  });

  after(async () => {
    try {
      await stopChild(child);
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  });

  const composition = () => renderPipeline(pulumiBackedComposition("proxy"), {}, KLUTCH_FUNCTION);

  const functions = () => [
    {
      apiVersion: "pkg.crossplane.io/v1beta1",
      kind: "Function",
      metadata: {
        name: FUNCTION_NAME,
        annotations: {
          "render.crossplane.io/runtime": "Development",
          "render.crossplane.io/runtime-development-target": `127.0.0.1:${port}`,
        },
      },
      // Not pulled: the Development runtime only dials the target above.
      spec: { package: "localhost/function-klutch:development" },
    },
  ];

  const xr = (spec: Json) => ({
    apiVersion: `${CONNECTOR_GROUP}/${CONNECTOR_VERSION}`,
    kind: XR_KIND,
    metadata: { name: "team-a-pg", labels: { "crossplane.io/claim-namespace": "team-a" } },
    spec: { ...spec, compositionRef: { name: composition().metadata.name } },
  });

  /**
   * `crossplane render`, with observed composed resources and extra resources (what the
   * function's requirements are served from) when given; the documents it prints.
   */
  function render(
    composite: Json,
    observed: Json[] = [],
    extraArgs: string[] = [],
    opts: { composition?: Json; extraResources?: Json[] } = {},
  ): Json[] {
    const files: Record<string, object[]> = {
      "xr.yaml": [composite],
      "composition.yaml": [opts.composition ?? composition()],
      "functions.yaml": functions(),
    };
    if (observed.length > 0) files["observed.yaml"] = observed;
    if (opts.extraResources) files["extra.yaml"] = opts.extraResources;
    const r = runCli(
      (dir) => [
        "render",
        ...["xr", "composition", "functions"].map((f) => path.join(dir, `${f}.yaml`)),
        ...(observed.length > 0 ? [`--observed-resources=${path.join(dir, "observed.yaml")}`] : []),
        ...(opts.extraResources ? [`--extra-resources=${path.join(dir, "extra.yaml")}`] : []),
        ...extraArgs,
      ],
      files,
    );
    assert.equal(
      r.status,
      0,
      `crossplane render failed:\n${r.stderr}\nfunction log:\n${fs.readFileSync(log, "utf8")}`,
    );
    return parseAllDocuments(r.stdout).map((d): Json => d.toJS());
  }

  const networkPaths = (docs: Json[]) => docs.filter((d) => d.kind === "NetworkPath");
  const renderedXr = (docs: Json[]) => docs.find((d) => d.kind === XR_KIND);
  const condition = (o: Json, type: string) => o?.status?.conditions?.find((c: Json) => c.type === type);

  it("renders a composition whose step is this function, with this function's input", () => {
    const step = composition().spec.pipeline[0]!;
    assert.equal(step.functionRef.name, FUNCTION_NAME);
    assert.equal(step.input.apiVersion, INPUT_API_VERSION);
  });

  it("composes the NetworkPath from the XR on the first call, not ready yet", () => {
    const docs = render(xr({ instanceHost: "pg.example.internal", port: 5432 }));
    const [np, ...more] = networkPaths(docs);
    assert.deepEqual(more, []);
    assert.equal(np.apiVersion, NETWORK_PATH_API_VERSION);
    assert.equal(np.metadata.annotations[COMPOSITION_RESOURCE_NAME], "network-path");
    assert.deepEqual(np.spec, {
      implementation: "proxy",
      consumerNamespace: "team-a",
      connection: "team-a-pg",
      instanceHost: "pg.example.internal",
      port: 5432,
    });
    const composite = renderedXr(docs);
    assert.equal(composite.status?.hostForConsumer, undefined);
    assert.notEqual(condition(composite, "Ready")?.status, "True");
  });

  it("copies the observed NetworkPath's result into the XR once it is Ready", () => {
    const observed = {
      apiVersion: NETWORK_PATH_API_VERSION,
      kind: "NetworkPath",
      metadata: {
        name: "team-a-pg-4fj9d",
        annotations: { [COMPOSITION_RESOURCE_NAME]: "network-path" },
        labels: { "crossplane.io/composite": "team-a-pg" },
      },
      spec: { implementation: "proxy", connection: "team-a-pg" },
      status: {
        hostForConsumer: "pg.team-a.svc.cluster.local",
        port: 5433,
        conditions: [
          {
            type: "Ready",
            status: "True",
            reason: "ConnectivityEstablished",
            lastTransitionTime: "2026-01-01T00:00:00Z",
          },
        ],
      },
    };
    const docs = render(xr({ instanceHost: "pg.example.internal", port: 5432 }), [observed]);
    const composite = renderedXr(docs);
    assert.equal(composite.status.hostForConsumer, "pg.team-a.svc.cluster.local");
    assert.equal(composite.status.port, 5433);
    assert.equal(condition(composite, "Ready")?.status, "True", JSON.stringify(composite.status));
    const [np] = networkPaths(docs);
    assert.equal(np.metadata.name, "team-a-pg-4fj9d");
    assert.equal(np.spec.instanceHost, "pg.example.internal");
  });

  it("holds the NetworkPath back, with a warning, while the XR has no instance host", () => {
    const docs = render(xr({ port: 5432 }), [], ["--include-function-results"]);
    assert.deepEqual(networkPaths(docs), []);
    const warnings = docs.filter((d) => d.kind === "Result" && d.severity === "SEVERITY_WARNING");
    assert.equal(warnings.length, 1, JSON.stringify(docs));
    assert.match(warnings[0].message, /"network-path".*"spec\.instanceHost"/);
  });

  describe("the network-aware binding where a8s serves the instance (a8s's binding, then the connection)", () => {
    const bindingComposition = () => a8sNetworkServiceBindingComposition({}, "proxy");
    const claimed = {
      apiVersion: "anynines.com/v1",
      kind: "XServiceBinding",
      metadata: {
        name: "orders-app-x2k9q",
        uid: "binding-uid",
        labels: { "crossplane.io/claim-name": "orders-app", "crossplane.io/claim-namespace": "team-a" },
      },
      spec: {
        instanceRef: "orders-db",
        serviceInstanceType: "postgresql",
        compositionRef: { name: "a8s-servicebinding-network-proxy" },
      },
    };
    const objects = (docs: Json[]) => docs.filter((d) => d.kind === "Object");
    const ready = {
      type: "Ready",
      status: "True",
      reason: "Available",
      lastTransitionTime: "2026-01-01T00:00:00Z",
    };

    it("first composes a8s's ServiceBinding as upstream's a8s-servicebinding does, and says it waits for a8s", () => {
      const docs = render(claimed, [], ["--include-function-results"], { composition: bindingComposition() });
      const [binding, ...more] = objects(docs);
      assert.deepEqual(more, []);
      assert.equal(binding.metadata.annotations[COMPOSITION_RESOURCE_NAME], "binding");
      assert.deepEqual(
        binding.spec.forProvider.manifest,
        a8sBindingManifest("orders-app", "team-a", "orders-db"),
      );
      assert.equal(binding.spec.connectionDetails, undefined);
      assert.deepEqual(
        docs.filter((d) => d.kind === XR_KIND),
        [],
        "no connection before the credentials",
      );
      const composite = docs.find((d) => d.kind === "XServiceBinding");
      assert.equal(composite.status.managed.implemented, false);
      assert.equal(condition(composite, "BindingImplemented")?.reason, "WaitingForA8s");
      assert.notEqual(condition(composite, "Ready")?.status, "True");
    });

    it("reads the credentials from the Secret a8s names once a8s has implemented the binding", () => {
      const [binding] = objects(render(claimed, [], [], { composition: bindingComposition() }));
      const observed = {
        ...binding,
        metadata: { ...binding.metadata, name: "orders-app-x2k9q-a8s" },
        status: {
          atProvider: {
            manifest: {
              ...binding.spec.forProvider.manifest,
              status: {
                implemented: true,
                secret: { name: "orders-app-service-binding", namespace: "team-a" },
              },
            },
          },
          conditions: [ready],
        },
      };
      const docs = render(claimed, [observed], [], { composition: bindingComposition() });
      const [again] = objects(docs);
      assert.equal(again.metadata.name, "orders-app-x2k9q-a8s");
      assert.deepEqual(
        again.spec.connectionDetails.map((d: Json) => [
          d.name,
          d.namespace,
          d.fieldPath,
          d.toConnectionSecretKey,
        ]),
        ["username", "password", "database", "instance_service"].map((k) => [
          "orders-app-service-binding",
          "team-a",
          `data.${k}`,
          k,
        ]),
      );
      const composite = docs.find((d) => d.kind === "XServiceBinding");
      assert.deepEqual(composite.status.managed, {
        implemented: true,
        secret: { name: "orders-app-service-binding", namespace: "team-a" },
      });
      // `crossplane render` hands the function no observed connection details, so the
      // connection step still waits here; the local stack's e2e runs it with real Secrets.
      assert.equal(condition(composite, "BindingImplemented")?.reason, "ReadingCredentials");
    });
  });

  describe("the network-aware binding where anynines' brokers serve the instance (provider-anynines' binding, then one connection per endpoint)", () => {
    const bindingComposition = () => a9sNetworkServiceBindingComposition({}, "proxy");
    const claimed = {
      apiVersion: "anynines.com/v1",
      kind: "XServiceBinding",
      metadata: {
        name: "orders-mq-x2k9q",
        uid: "binding-uid",
        labels: { "crossplane.io/claim-name": "orders-mq", "crossplane.io/claim-namespace": "team-a" },
      },
      spec: {
        instanceRef: "orders-rabbit",
        serviceInstanceType: "messaging",
        compositionRef: { name: "a9s-servicebinding-network-proxy" },
      },
    };
    const bindings = (docs: Json[]) => docs.filter((d) => d.kind === "ServiceBinding");

    it("composes provider-anynines' ServiceBinding as upstream's a9s-servicebinding does, and no connection before its credentials", () => {
      const docs = render(claimed, [], ["--include-function-results"], { composition: bindingComposition() });
      const [binding, ...more] = bindings(docs);
      assert.deepEqual(more, []);
      assert.equal(binding.apiVersion, "dataservices.anynines.com/v1");
      assert.equal(binding.metadata.annotations[COMPOSITION_RESOURCE_NAME], "a9s-servicebinding");
      // crossplane-api/api/a9s/servicebinding/composition.yaml's patches (anynines/klutchio 0b4539e).
      assert.equal(binding.metadata.labels["klutch.io/instance-type"], "messaging");
      assert.equal(binding.metadata.labels["crossplane.io/claim-name"], "orders-mq");
      assert.equal(binding.metadata.labels["crossplane.io/claim-namespace"], "team-a");
      assert.deepEqual(binding.spec, {
        forProvider: { acceptsIncomplete: true, instanceName: "orders-rabbit" },
        providerConfigRef: { name: "messaging-service-broker" },
        writeConnectionSecretToRef: { namespace: "team-a", name: "orders-mq-creds" },
      });
      assert.deepEqual(
        docs.filter((d) => d.kind === XR_KIND),
        [],
        "no connection before the credentials",
      );
      const composite = docs.find((d) => d.kind === "XServiceBinding");
      assert.equal(condition(composite, "BindingImplemented")?.reason, "WaitingForProvider");
      assert.equal(condition(composite, "ConnectionReady")?.reason, "WaitingForCredentials");
      assert.notEqual(condition(composite, "Ready")?.status, "True");
    });

    it("copies provider-anynines' status to status.managed once it is observed", () => {
      const [binding] = bindings(render(claimed, [], [], { composition: bindingComposition() }));
      const observed = {
        ...binding,
        metadata: { ...binding.metadata, name: "orders-mq-x2k9q-sb" },
        status: {
          atProvider: { serviceBindingID: 7, state: "succeeded" },
          conditions: [
            {
              type: "Ready",
              status: "True",
              reason: "Available",
              lastTransitionTime: "2026-01-01T00:00:00Z",
            },
          ],
        },
      };
      const docs = render(claimed, [observed], [], { composition: bindingComposition() });
      const composite = docs.find((d) => d.kind === "XServiceBinding");
      assert.equal(composite.status.managed.serviceBindingID, 7);
      assert.equal(composite.status.managed.state, "succeeded");
      // No observed connection details under render: the credentials are read on a real control plane.
      assert.equal(condition(composite, "BindingImplemented")?.reason, "ReadingCredentials");
    });
  });

  describe("the local PostgreSQL instance, revoking the roles of bindings that are gone", () => {
    const instanceComposition = () => localPostgresqlComposition({ image: "klutch.local/postgres:15" });
    const [A, B] = [roleName("binding-a"), roleName("binding-b")] as [string, string];
    const instance = {
      apiVersion: "anynines.com/v1",
      kind: "XPostgresqlInstance",
      metadata: {
        name: "pg-x7k2p",
        uid: "instance-uid",
        labels: { "crossplane.io/claim-name": "pg", "crossplane.io/claim-namespace": "team-a" },
      },
      spec: { compositionRef: { name: "a8s-postgresql" } },
      status: { managed: { bindingRoles: [A, B] } },
    };
    /** An XServiceBinding as Crossplane lists it for the instance's requirement. */
    const binding = (uid: string, namespace: string, instanceRef: string) => ({
      apiVersion: "anynines.com/v1",
      kind: "XServiceBinding",
      metadata: {
        name: `b-${uid}`,
        uid,
        labels: { "crossplane.io/claim-name": `b-${uid}`, "crossplane.io/claim-namespace": namespace },
      },
      spec: { instanceRef, serviceInstanceType: "postgresql" },
    });
    // binding-a is gone from team-a; binding-b lives; binding-c binds another instance. The last
    // one carries binding-a's uid in team-b (impossible in a cluster, uids are unique): if it were
    // delivered the role would count as live, so the test sees that Crossplane serves the
    // requirement by the claim-namespace label.
    const extraResources = [
      binding("binding-b", "team-a", "pg"),
      binding("binding-c", "team-a", "other"),
      binding("binding-a", "team-b", "pg"),
    ];
    const revocations = (docs: Json[]) =>
      docs.filter(
        (d) => d.kind === "Object" && d.metadata.annotations[COMPOSITION_RESOURCE_NAME].startsWith("revoke-"),
      );

    it("lists the namespace's bindings through Crossplane's extra resources and composes a pod dropping the gone binding's role", () => {
      const docs = render(instance, [], [], { composition: instanceComposition(), extraResources });
      const [revoke, ...more] = revocations(docs);
      assert.deepEqual(more, []);
      const pod = revoke.spec.forProvider.manifest;
      assert.equal(pod.kind, "Pod");
      assert.equal(pod.spec.containers[0].env.find((e: Json) => e.name === "ROLES").value, A);
      const composite = docs.find((d) => d.kind === "XPostgresqlInstance");
      assert.deepEqual(composite.status.managed.bindingRoles, [A, B].sort());
    });

    it("forgets the role and composes no pod once Crossplane observes the pod's Object Ready", () => {
      const [revoke] = revocations(
        render(instance, [], [], { composition: instanceComposition(), extraResources }),
      );
      const observed = {
        ...revoke,
        metadata: { ...revoke.metadata, name: "pg-x7k2p-revoke" },
        status: {
          conditions: [
            {
              type: "Ready",
              status: "True",
              reason: "Available",
              lastTransitionTime: "2026-01-01T00:00:00Z",
            },
          ],
        },
      };
      const docs = render(instance, [observed], [], { composition: instanceComposition(), extraResources });
      assert.deepEqual(revocations(docs), []);
      const composite = docs.find((d) => d.kind === "XPostgresqlInstance");
      assert.deepEqual(composite.status.managed.bindingRoles, [B]);
    });
  });
});
