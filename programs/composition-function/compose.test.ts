import { strict as assert } from "node:assert";
import {
  Ready,
  RunFunctionRequest,
  RunFunctionResponse,
  Severity,
  Status,
  Target,
  fromCompose,
} from "@crossplane-org/function-sdk-typescript";
import { compose } from "./compose.js";
import {
  A8S_SERVICE_BINDING_KIND,
  INPUT_API_VERSION,
  LOCAL_POSTGRESQL_BINDING_KIND,
  LOCAL_POSTGRESQL_INSTANCE_KIND,
  NETWORK_CONNECTION_KIND,
  NETWORK_CONNECTIONS_KIND,
  RESOURCES_KIND,
} from "./input.js";
import { roleName } from "./binding-roles.js";
import { networkPathTemplate } from "./test-helpers.js";

type Json = Record<string, unknown>;

const INPUT = {
  apiVersion: INPUT_API_VERSION,
  kind: RESOURCES_KIND,
  resources: [
    networkPathTemplate([
      {
        type: "FromCompositeFieldPath",
        fromFieldPath: "spec.instanceHost",
        toFieldPath: "spec.instanceHost",
        policy: { fromFieldPath: "Required" },
      },
      {
        type: "ToCompositeFieldPath",
        fromFieldPath: "status.hostForConsumer",
        toFieldPath: "status.hostForConsumer",
      },
    ]),
  ],
};

const XR = {
  apiVersion: "klutch.anynines.com/v1",
  kind: "XTCPConnection",
  metadata: { name: "conn-1", labels: { "crossplane.io/claim-namespace": "team-a" } },
  spec: { instanceHost: "pg.internal", port: 5432 },
  status: { conditions: [] },
};

/**
 * Runs the function the way its gRPC server does (fromCompose, as serve() wires it), with the
 * request and the response passed through their protobuf encoding as on the wire.
 */
async function run(request: {
  input?: Json;
  composite?: Json;
  observed?: Record<string, Json>;
  /** Connection details of observed composed resources, by name (values as Secrets hold them). */
  observedDetails?: Record<string, Record<string, string>>;
  desired?: Record<string, Json>;
  desiredComposite?: Json;
  desiredCompositeDetails?: Record<string, string>;
  desiredCompositeReady?: Ready;
  /** Extra resources Crossplane delivers, by key; a key left out was not asked for yet. */
  extraResources?: Record<string, Json[]>;
}): Promise<RunFunctionResponse> {
  const bytes = (details: Record<string, string> = {}) =>
    Object.fromEntries(Object.entries(details).map(([k, v]) => [k, Buffer.from(v)]));
  const wrap = (resources: Record<string, Json> = {}, details: Record<string, Record<string, string>> = {}) =>
    Object.fromEntries(
      Object.entries(resources).map(([k, resource]) => [
        k,
        { resource, connectionDetails: bytes(details[k]) },
      ]),
    );
  const req = RunFunctionRequest.fromPartial({
    meta: { tag: "t" },
    input: request.input,
    observed: {
      composite: { resource: request.composite ?? XR },
      resources: wrap(request.observed, request.observedDetails),
    },
    desired: {
      ...(request.desiredComposite
        ? {
            composite: {
              resource: request.desiredComposite,
              connectionDetails: bytes(request.desiredCompositeDetails),
              ready: request.desiredCompositeReady ?? Ready.READY_UNSPECIFIED,
            },
          }
        : {}),
      resources: wrap(request.desired),
    },
    extraResources: Object.fromEntries(
      Object.entries(request.extraResources ?? {}).map(([k, items]) => [
        k,
        { items: items.map((resource) => ({ resource })) },
      ]),
    ),
  });
  const wire = RunFunctionRequest.decode(RunFunctionRequest.encode(req).finish());
  const rsp = await fromCompose(compose).RunFunction(wire);
  return RunFunctionResponse.decode(RunFunctionResponse.encode(rsp).finish());
}

const results = (rsp: RunFunctionResponse) => rsp.results.map((r) => [r.severity, r.message] as const);

describe("composition function: compose (SDK request in, desired state out)", () => {
  it("first call, nothing observed: emits the NetworkPath patched from the XR, not ready", async () => {
    const rsp = await run({ input: INPUT });
    assert.deepEqual(results(rsp), []);
    const np = rsp.desired!.resources["network-path"]!;
    assert.deepEqual(np.resource, {
      apiVersion: "klutch.anynines.com/v1alpha1",
      kind: "NetworkPath",
      spec: { implementation: "proxy", consumerNamespace: "team-a", instanceHost: "pg.internal" },
    });
    assert.equal(np.ready, Ready.READY_FALSE);
    // The desired XR says which object it is and nothing else, so Crossplane applies no status.
    assert.deepEqual(rsp.desired!.composite!.resource, { apiVersion: XR.apiVersion, kind: XR.kind });
    assert.equal(rsp.desired!.composite!.ready, Ready.READY_UNSPECIFIED);
    assert.equal(rsp.meta!.tag, "t");
  });

  it("observed NetworkPath Ready True: READY_TRUE, its name kept, its status copied to the XR", async () => {
    const observed = {
      apiVersion: "klutch.anynines.com/v1alpha1",
      kind: "NetworkPath",
      metadata: { name: "conn-1-abcde" },
      spec: { implementation: "proxy" },
      status: { hostForConsumer: "consumer.internal", conditions: [{ type: "Ready", status: "True" }] },
    };
    const rsp = await run({ input: INPUT, observed: { "network-path": observed } });
    assert.deepEqual(results(rsp), []);
    const np = rsp.desired!.resources["network-path"]!;
    assert.equal(np.ready, Ready.READY_TRUE);
    assert.deepEqual((np.resource as Json).metadata, { name: "conn-1-abcde" });
    assert.equal((np.resource as Json).status, undefined);
    assert.deepEqual(rsp.desired!.composite!.resource, {
      apiVersion: XR.apiVersion,
      kind: XR.kind,
      status: { hostForConsumer: "consumer.internal" },
    });
  });

  it("observed but not Ready: READY_FALSE", async () => {
    const observed = {
      apiVersion: "v",
      kind: "NetworkPath",
      status: { conditions: [{ type: "Ready", status: "False" }] },
    };
    const rsp = await run({ input: INPUT, observed: { "network-path": observed } });
    assert.equal(rsp.desired!.resources["network-path"]!.ready, Ready.READY_FALSE);
  });

  it("a Required field missing on a new resource: not emitted, a warning, the XR not ready", async () => {
    const rsp = await run({ input: INPUT, composite: { ...XR, spec: { port: 5432 } } });
    assert.equal(rsp.desired!.resources["network-path"], undefined);
    assert.equal(rsp.desired!.composite!.ready, Ready.READY_FALSE);
    assert.equal(rsp.results.length, 1);
    assert.equal(rsp.results[0]!.severity, Severity.SEVERITY_WARNING);
    assert.match(rsp.results[0]!.message, /"network-path".*"spec\.instanceHost"/);
  });

  it("keeps what earlier pipeline steps desired: their composed resources and their XR status", async () => {
    const rsp = await run({
      input: INPUT,
      desired: { "from-earlier-step": { apiVersion: "v1", kind: "ConfigMap", data: { a: "b" } } },
      desiredComposite: { apiVersion: XR.apiVersion, kind: XR.kind, status: { earlier: true } },
      observed: {
        "network-path": {
          apiVersion: "v",
          kind: "NetworkPath",
          status: { hostForConsumer: "consumer.internal" },
        },
      },
    });
    assert.deepEqual(Object.keys(rsp.desired!.resources).sort(), ["from-earlier-step", "network-path"]);
    assert.deepEqual(rsp.desired!.resources["from-earlier-step"]!.resource, {
      apiVersion: "v1",
      kind: "ConfigMap",
      data: { a: "b" },
    });
    assert.deepEqual(rsp.desired!.composite!.resource, {
      apiVersion: XR.apiVersion,
      kind: XR.kind,
      status: { earlier: true, hostForConsumer: "consumer.internal" },
    });
  });

  describe("a bad input is a fatal result, never a crash", () => {
    const fatalOf = async (input: Json | undefined): Promise<string> => {
      const rsp = await run({ input });
      assert.equal(rsp.results.length, 1, JSON.stringify(rsp.results));
      assert.equal(rsp.results[0]!.severity, Severity.SEVERITY_FATAL);
      assert.deepEqual(rsp.desired!.resources, {});
      return rsp.results[0]!.message;
    };

    it("no input", async () => {
      assert.match(
        await fatalOf(undefined),
        /invalid function-klutch input: .*needs an input with apiVersion/,
      );
    });

    it("function-patch-and-transform's apiVersion", async () => {
      assert.match(
        await fatalOf({ ...INPUT, apiVersion: "pt.fn.crossplane.io/v1beta1" }),
        /apiVersion "pt\.fn\.crossplane\.io\/v1beta1".*takes apiVersion fn\.klutch\.anynines\.com\/v1alpha1/,
      );
    });

    it("no resources", async () => {
      assert.match(await fatalOf({ ...INPUT, resources: [] }), /resources are required/);
    });

    it("an unknown patch type", async () => {
      const resource = { ...INPUT.resources[0]!, patches: [{ type: "PatchSet", patchSetName: "x" }] };
      assert.match(
        await fatalOf({ ...INPUT, resources: [resource] }),
        /"network-path": patches\[0\]\.type is "PatchSet"/,
      );
    });

    it("a patch through a value of the wrong type", async () => {
      const rsp = await run({
        input: INPUT,
        composite: { ...XR, spec: { instanceHost: { nested: "x" } }, metadata: "x" },
      });
      assert.deepEqual(results(rsp), [
        [
          Severity.SEVERITY_FATAL,
          'cannot render composed resource "network-path" "FromCompositeFieldPath" patch at index 0: metadata: not an object',
        ],
      ]);
    });

    it("a request without an observed composite resource", async () => {
      const req = RunFunctionRequest.fromPartial({ input: INPUT });
      const rsp = await fromCompose(compose).RunFunction(req);
      assert.equal(rsp.results[0]!.severity, Severity.SEVERITY_FATAL);
      assert.match(rsp.results[0]!.message, /no observed composite resource/);
    });

    it("an exception inside is caught and reported", async () => {
      const req = RunFunctionRequest.fromPartial({ input: INPUT });
      // A getter that throws stands in for any bug below compose.
      Object.defineProperty(req, "observed", {
        get() {
          throw new Error("boom");
        },
      });
      const rsp = await fromCompose(compose).RunFunction(req);
      assert.deepEqual(results(rsp), [[Severity.SEVERITY_FATAL, "function-klutch failed: boom"]]);
    });
  });
});

const details = (d: Readonly<Record<string, Buffer>> | undefined) =>
  Object.fromEntries(Object.entries(d ?? {}).map(([k, v]) => [k, v.toString("utf8")]));
const conditions = (rsp: RunFunctionResponse) =>
  rsp.conditions.map((c) => ({
    type: c.type,
    status: c.status,
    reason: c.reason,
    message: c.message,
    target: c.target,
  }));
const spec = (rsp: RunFunctionResponse, name: string): Record<string, any> =>
  rsp.desired!.resources[name]!.resource!.spec;
const CLAIMED = (name: string) => ({
  "crossplane.io/claim-name": name,
  "crossplane.io/claim-namespace": "team-a",
});
const readyObject = (manifest: Json = {}, ready = true): Json => ({
  apiVersion: "kubernetes.crossplane.io/v1alpha2",
  kind: "Object",
  metadata: { name: "generated-x1" },
  spec: { forProvider: { manifest } },
  status: { conditions: [{ type: "Ready", status: ready ? "True" : "False" }] },
});

describe("composition function: compose, the local PostgreSQL steps", () => {
  const INSTANCE_INPUT = {
    apiVersion: INPUT_API_VERSION,
    kind: LOCAL_POSTGRESQL_INSTANCE_KIND,
    image: "klutch.local/postgres:15",
    providerConfigName: "local",
  };
  const INSTANCE_XR = {
    apiVersion: "anynines.com/v1",
    kind: "XPostgresqlInstance",
    metadata: { name: "pg-x7k2p", uid: "i-1", labels: CLAIMED("pg") },
    spec: {},
  };

  it("LocalPostgresqlInstance: three Objects, not ready, a generated password, status.managed on the XR", async () => {
    const rsp = await run({ input: INSTANCE_INPUT, composite: INSTANCE_XR });
    assert.deepEqual(results(rsp), []);
    assert.deepEqual(
      Object.entries(rsp.desired!.resources).map(([k, r]) => [k, r.ready]),
      [
        ["admin-credentials", Ready.READY_FALSE],
        ["server", Ready.READY_FALSE],
        ["service", Ready.READY_FALSE],
      ],
    );
    const password = spec(rsp, "admin-credentials").forProvider.manifest.stringData.password;
    assert.match(password, /^[A-Za-z0-9_-]{32}$/);
    assert.deepEqual(rsp.desired!.composite!.resource, {
      apiVersion: "anynines.com/v1",
      kind: "XPostgresqlInstance",
      status: {
        managed: {
          host: "pg-pg.team-a.svc.cluster.local",
          port: 5432,
          adminSecret: "pg-pg-admin",
          bindingRoles: [],
        },
      },
    });
    assert.equal(rsp.desired!.composite!.ready, Ready.READY_UNSPECIFIED);
    assert.deepEqual(rsp.conditions, []);
    // Crossplane 1.20 reads requirements.extra_resources: the namespace's bindings, by label.
    assert.deepEqual(rsp.requirements!.extraResources, {
      bindings: {
        apiVersion: "anynines.com/v1",
        kind: "XServiceBinding",
        matchName: undefined,
        matchLabels: { labels: { "crossplane.io/claim-namespace": "team-a" } },
        namespace: undefined,
      },
    });

    // The next call reads the password back from the observed Object, and sees what is ready.
    const again = await run({
      input: INSTANCE_INPUT,
      composite: INSTANCE_XR,
      observed: {
        "admin-credentials": readyObject(spec(rsp, "admin-credentials").forProvider.manifest),
        server: readyObject({}, false),
        service: readyObject(),
      },
    });
    assert.equal(spec(again, "admin-credentials").forProvider.manifest.stringData.password, password);
    assert.deepEqual(
      Object.values(again.desired!.resources).map((r) => r.ready),
      [Ready.READY_TRUE, Ready.READY_FALSE, Ready.READY_TRUE],
    );
  });

  it("LocalPostgresqlInstance: a binding it knew that is gone gets a revocation pod; the live one keeps its role", async () => {
    const binding = (uid: string, extra: Json = {}) => ({
      apiVersion: "anynines.com/v1",
      kind: "XServiceBinding",
      metadata: { name: `b-${uid}`, uid, labels: CLAIMED(`b-${uid}`), ...extra },
      spec: { instanceRef: "pg", serviceInstanceType: "postgresql" },
    });
    const rsp = await run({
      input: INSTANCE_INPUT,
      composite: {
        ...INSTANCE_XR,
        status: { managed: { bindingRoles: [roleName("b-1"), roleName("b-2")] } },
      },
      extraResources: {
        bindings: [
          binding("b-2"),
          binding("b-3"),
          binding("b-1", { deletionTimestamp: "2026-11-27T09:00:00Z" }),
        ],
      },
    });
    assert.deepEqual(results(rsp), []);
    const revoke = Object.keys(rsp.desired!.resources).filter((k) => k.startsWith("revoke-"));
    assert.equal(revoke.length, 1);
    const pod = spec(rsp, revoke[0]!).forProvider.manifest;
    assert.equal(pod.kind, "Pod");
    assert.equal(pod.spec.containers[0].env.find((e: Json) => e.name === "ROLES").value, roleName("b-1"));
    assert.deepEqual(
      (rsp.desired!.composite!.resource as Record<string, any>).status.managed.bindingRoles,
      [roleName("b-1"), roleName("b-2"), roleName("b-3")].sort(),
    );
  });

  it("LocalPostgresqlInstance without the claim's labels: fatal, naming the label", async () => {
    const rsp = await run({
      input: INSTANCE_INPUT,
      composite: { ...INSTANCE_XR, metadata: { name: "pg-x7k2p" } },
    });
    assert.equal(rsp.results.length, 1);
    assert.equal(rsp.results[0]!.severity, Severity.SEVERITY_FATAL);
    assert.match(
      rsp.results[0]!.message,
      /^XPostgresqlInstance "pg-x7k2p" has no label crossplane\.io\/claim-name/,
    );
    assert.deepEqual(rsp.desired!.resources, {});
  });

  const BINDING_INPUT = {
    apiVersion: INPUT_API_VERSION,
    kind: LOCAL_POSTGRESQL_BINDING_KIND,
    image: "klutch.local/postgres:15",
    providerConfigName: "local",
    connectionSecretNamespace: "crossplane-system",
  };
  const BINDING_XR = {
    apiVersion: "anynines.com/v1",
    kind: "XServiceBinding",
    metadata: { name: "app-db-9fk2d", uid: "b-1", labels: CLAIMED("app-db") },
    spec: { instanceRef: "pg", serviceInstanceType: "postgresql" },
  };
  const INSTANCE_FOUND = {
    ...INSTANCE_XR,
    status: { managed: { host: "pg-pg.team-a.svc", port: 5432, adminSecret: "pg-pg-admin" } },
  };
  const SELECTOR = {
    apiVersion: "anynines.com/v1",
    kind: "XPostgresqlInstance",
    matchName: undefined,
    matchLabels: { labels: { "crossplane.io/claim-name": "pg", "crossplane.io/claim-namespace": "team-a" } },
    namespace: undefined,
  };

  it("LocalPostgresqlBinding, instance not delivered yet: states the requirement, composes nothing, keeps desired", async () => {
    const rsp = await run({
      input: BINDING_INPUT,
      composite: BINDING_XR,
      desired: { earlier: { apiVersion: "v1", kind: "ConfigMap" } },
    });
    assert.deepEqual(results(rsp), []);
    assert.deepEqual(rsp.requirements!.extraResources, { instance: SELECTOR });
    assert.deepEqual(rsp.requirements!.resources, {});
    assert.deepEqual(Object.keys(rsp.desired!.resources), ["earlier"]);
    assert.deepEqual(rsp.conditions, []);
    assert.equal(rsp.desired!.composite!.ready, Ready.READY_UNSPECIFIED);
  });

  it("LocalPostgresqlBinding, no instance found: a warning and a condition on composite and claim, not ready", async () => {
    const rsp = await run({ input: BINDING_INPUT, composite: BINDING_XR, extraResources: { instance: [] } });
    const message = 'PostgresqlInstance "pg" not found in namespace "team-a"';
    assert.deepEqual(rsp.results, [
      {
        severity: Severity.SEVERITY_WARNING,
        message,
        reason: undefined,
        target: Target.TARGET_COMPOSITE_AND_CLAIM,
      },
    ]);
    assert.deepEqual(conditions(rsp), [
      {
        type: "InstanceFound",
        status: Status.STATUS_CONDITION_FALSE,
        reason: "InstanceNotFound",
        message,
        target: Target.TARGET_COMPOSITE_AND_CLAIM,
      },
    ]);
    assert.deepEqual(rsp.desired!.resources, {});
    assert.equal(rsp.desired!.composite!.ready, Ready.READY_FALSE);
    assert.deepEqual(rsp.requirements!.extraResources, { instance: SELECTOR });
  });

  it("LocalPostgresqlBinding, instance found: credentials and role, the binding's status, InstanceFound True", async () => {
    const rsp = await run({
      input: BINDING_INPUT,
      composite: BINDING_XR,
      extraResources: { instance: [INSTANCE_FOUND] },
    });
    assert.deepEqual(results(rsp), []);
    assert.deepEqual(
      Object.entries(rsp.desired!.resources).map(([k, r]) => [k, r.ready]),
      [
        ["credentials", Ready.READY_FALSE],
        ["role", Ready.READY_FALSE],
      ],
    );
    const stringData = spec(rsp, "credentials").forProvider.manifest.stringData;
    assert.deepEqual(
      { ...stringData, password: "…" },
      {
        username: roleName("b-1"),
        password: "…",
        database: "postgres",
        instance_service: "pg-pg.team-a.svc",
      },
    );
    assert.deepEqual(spec(rsp, "credentials").writeConnectionSecretToRef, {
      namespace: "crossplane-system",
      name: "b-1-credentials",
    });
    assert.equal(spec(rsp, "role").forProvider.manifest.kind, "Pod");
    assert.deepEqual(rsp.desired!.composite!.resource, {
      apiVersion: "anynines.com/v1",
      kind: "XServiceBinding",
      status: {
        managed: { secret: { name: "app-db-service-binding", namespace: "team-a" }, implemented: false },
      },
    });
    assert.deepEqual(rsp.desired!.composite!.connectionDetails, {});
    assert.deepEqual(
      conditions(rsp).map((c) => [c.type, c.status, c.reason]),
      [["InstanceFound", Status.STATUS_CONDITION_TRUE, "InstanceFound"]],
    );
  });

  it("LocalPostgresqlBinding, both Objects ready: implemented, the credentials published as the backend wrote them", async () => {
    const backend = {
      username: roleName("b-1"),
      password: "pw",
      database: "postgres",
      instance_service: "pg-pg.team-a.svc",
    };
    const rsp = await run({
      input: BINDING_INPUT,
      composite: BINDING_XR,
      extraResources: { instance: [INSTANCE_FOUND] },
      observed: {
        credentials: readyObject({ stringData: { password: "pw" } }),
        role: readyObject(),
      },
      observedDetails: { credentials: backend },
    });
    assert.equal(spec(rsp, "credentials").forProvider.manifest.stringData.password, "pw");
    assert.deepEqual(details(rsp.desired!.composite!.connectionDetails), backend);
    assert.equal(rsp.desired!.composite!.resource!.status.managed.implemented, true);
  });
});

describe("composition function: compose, the NetworkConnection step after a backend step", () => {
  const INPUT = {
    apiVersion: INPUT_API_VERSION,
    kind: NETWORK_CONNECTION_KIND,
    credentialsFrom: "credentials",
    hostKey: "instance_service",
    defaultPort: 5432,
  };
  const BINDING = {
    apiVersion: "anynines.com/v1",
    kind: "XServiceBinding",
    metadata: { name: "app-db-9fk2d", uid: "b-1", labels: CLAIMED("app-db") },
    spec: { instanceRef: "pg", serviceInstanceType: "postgresql" },
  };
  const BACKEND = {
    username: "klutch_x",
    password: "pw",
    database: "postgres",
    instance_service: "pg-pg.team-a.svc",
  };
  // What the binding step left in desired state: its Objects, its status, the backend's credentials.
  const EARLIER = {
    desired: { credentials: readyObject(), role: readyObject() },
    desiredComposite: {
      apiVersion: BINDING.apiVersion,
      kind: BINDING.kind,
      status: { managed: { implemented: true } },
    },
    desiredCompositeDetails: BACKEND,
  };
  const observedConnection = (status: Json): Json => ({
    apiVersion: "klutch.anynines.com/v1",
    kind: "XTCPConnection",
    metadata: { name: "app-db-9fk2d-c1" },
    spec: { instanceHost: "pg-pg.team-a.svc", port: 5432 },
    status,
  });
  const READY = { type: "Ready", status: "True", reason: "Available" };

  it("credentials not observed yet: no connection, the earlier credentials withdrawn, waiting, not ready", async () => {
    const partial: Record<string, Record<string, string>>[] = [
      {},
      { credentials: { username: "klutch_x", password: "pw" } },
    ];
    for (const observedDetails of partial) {
      const rsp = await run({
        input: INPUT,
        composite: BINDING,
        ...EARLIER,
        observed: { credentials: readyObject() },
        observedDetails,
      });
      assert.deepEqual(results(rsp), []);
      assert.deepEqual(Object.keys(rsp.desired!.resources), ["credentials", "role"]);
      assert.deepEqual(rsp.desired!.composite!.connectionDetails, {});
      assert.equal(rsp.desired!.composite!.ready, Ready.READY_FALSE);
      assert.deepEqual(rsp.desired!.composite!.resource!.status, { managed: { implemented: true } });
      assert.deepEqual(
        conditions(rsp).map((c) => [c.type, c.status, c.reason, c.target]),
        [
          [
            "ConnectionReady",
            Status.STATUS_CONDITION_FALSE,
            "WaitingForCredentials",
            Target.TARGET_COMPOSITE_AND_CLAIM,
          ],
        ],
      );
    }
  });

  it("credentials observed, connection not ready: the connection composed, no credentials published, its reason shown", async () => {
    const rsp = await run({
      input: { ...INPUT, implementation: "proxy" },
      composite: BINDING,
      ...EARLIER,
      observed: {
        credentials: readyObject(),
        connection: observedConnection({
          conditions: [
            {
              type: "Ready",
              status: "False",
              reason: "Creating",
              message: "Unready resources: network-path",
            },
          ],
        }),
      },
      observedDetails: { credentials: BACKEND },
    });
    assert.deepEqual(Object.keys(rsp.desired!.resources), ["credentials", "role", "connection"]);
    const connection = rsp.desired!.resources.connection!;
    assert.deepEqual(connection.resource, {
      apiVersion: "klutch.anynines.com/v1",
      kind: "XTCPConnection",
      spec: {
        // The seed's InstanceType: the bound instance's software, from spec.serviceInstanceType.
        enhancements: [{ InstanceType: "PostgreSQL" }],
        instanceHost: "pg-pg.team-a.svc",
        port: 5432,
        compositionRef: { name: "xtcpconnections-proxy" },
      },
    });
    assert.equal(connection.ready, Ready.READY_FALSE);
    assert.deepEqual(rsp.desired!.composite!.connectionDetails, {});
    assert.equal(rsp.desired!.composite!.ready, Ready.READY_FALSE);
    const message = "the connection to the instance is not Ready (Creating): Unready resources: network-path";
    assert.deepEqual(conditions(rsp), [
      {
        type: "ConnectionReady",
        status: Status.STATUS_CONDITION_FALSE,
        reason: "ConnectionNotReady",
        message,
        target: Target.TARGET_COMPOSITE_AND_CLAIM,
      },
    ]);
    assert.deepEqual(results(rsp), [[Severity.SEVERITY_WARNING, message]]);
  });

  it("a Ready connection: the backend's keys with host and port rewritten for the app cluster", async () => {
    const rsp = await run({
      input: INPUT,
      composite: BINDING,
      ...EARLIER,
      observed: {
        credentials: readyObject(),
        connection: observedConnection({
          hostForConsumer: "app-db-9fk2d-c1.team-a.svc.cluster.local",
          port: 40001,
          conditions: [READY],
        }),
      },
      observedDetails: { credentials: BACKEND },
    });
    assert.deepEqual(results(rsp), []);
    assert.equal(rsp.desired!.resources.connection!.ready, Ready.READY_TRUE);
    assert.deepEqual(details(rsp.desired!.composite!.connectionDetails), {
      ...BACKEND,
      instance_service: "app-db-9fk2d-c1.team-a.svc.cluster.local",
      host: "app-db-9fk2d-c1.team-a.svc.cluster.local",
      port: "40001",
    });
    // Not made ready here: Crossplane derives it from the composed resources, or an earlier step's False stands.
    assert.equal(rsp.desired!.composite!.ready, Ready.READY_UNSPECIFIED);
    assert.deepEqual(
      conditions(rsp).map((c) => [c.type, c.status, c.reason]),
      [["ConnectionReady", Status.STATUS_CONDITION_TRUE, "ConnectionEstablished"]],
    );
  });

  it("NOOP: a Ready connection without hostForConsumer publishes the instance's own host and port", async () => {
    const rsp = await run({
      input: INPUT,
      composite: BINDING,
      ...EARLIER,
      observed: { credentials: readyObject(), connection: observedConnection({ conditions: [READY] }) },
      observedDetails: { credentials: BACKEND },
    });
    assert.deepEqual(details(rsp.desired!.composite!.connectionDetails), {
      ...BACKEND,
      host: "pg-pg.team-a.svc",
      port: "5432",
    });
    assert.equal(rsp.conditions[0]!.status, Status.STATUS_CONDITION_TRUE);
  });

  it("an earlier step's not-ready composite stays not ready, whatever the connection", async () => {
    const rsp = await run({
      input: INPUT,
      composite: BINDING,
      ...EARLIER,
      desiredCompositeReady: Ready.READY_FALSE,
      observed: { connection: observedConnection({ conditions: [READY] }), credentials: readyObject() },
      observedDetails: { credentials: BACKEND },
    });
    assert.equal(rsp.conditions[0]!.status, Status.STATUS_CONDITION_TRUE);
    assert.equal(rsp.desired!.composite!.ready, Ready.READY_FALSE);
  });

  it("in one pipeline after LocalPostgresqlBinding: the binding's resources stay, the credentials are rewritten", async () => {
    const binding = await run({
      input: {
        apiVersion: INPUT_API_VERSION,
        kind: LOCAL_POSTGRESQL_BINDING_KIND,
        image: "klutch.local/postgres:15",
        providerConfigName: "local",
        connectionSecretNamespace: "crossplane-system",
      },
      composite: BINDING,
      extraResources: {
        instance: [
          {
            apiVersion: "anynines.com/v1",
            kind: "XPostgresqlInstance",
            metadata: { name: "pg-1", labels: CLAIMED("pg") },
            status: { managed: { host: "pg-pg.team-a.svc", port: 5432, adminSecret: "pg-pg-admin" } },
          },
        ],
      },
      observed: { credentials: readyObject({ stringData: { password: "pw" } }), role: readyObject() },
      observedDetails: { credentials: BACKEND },
    });
    const observed = {
      credentials: readyObject({ stringData: { password: "pw" } }),
      role: readyObject(),
      connection: observedConnection({ hostForConsumer: "c.team-a.svc", port: 40001, conditions: [READY] }),
    };
    const rsp = await run({
      input: INPUT,
      composite: BINDING,
      desired: Object.fromEntries(
        Object.entries(binding.desired!.resources).map(([k, r]) => [k, r.resource!]),
      ),
      desiredComposite: binding.desired!.composite!.resource!,
      desiredCompositeDetails: details(binding.desired!.composite!.connectionDetails),
      desiredCompositeReady: binding.desired!.composite!.ready,
      observed,
      observedDetails: { credentials: BACKEND },
    });
    assert.deepEqual(Object.keys(rsp.desired!.resources), ["credentials", "role", "connection"]);
    assert.deepEqual(rsp.desired!.resources.role!.resource, binding.desired!.resources.role!.resource);
    assert.deepEqual(details(rsp.desired!.composite!.connectionDetails), {
      ...BACKEND,
      instance_service: "c.team-a.svc",
      host: "c.team-a.svc",
      port: "40001",
    });
    assert.deepEqual(rsp.desired!.composite!.resource!.status.managed, {
      secret: { name: "app-db-service-binding", namespace: "team-a" },
      implemented: true,
    });
    assert.deepEqual(
      conditions(rsp).map((c) => c.type),
      ["ConnectionReady"],
    );
  });

  it("in one pipeline after A8sServiceBinding: a8s's credentials rewritten, its binding's status kept", async () => {
    const a8sInput = {
      apiVersion: INPUT_API_VERSION,
      kind: A8S_SERVICE_BINDING_KIND,
      providerConfigName: "kubernetes-provider",
      connectionSecretNamespace: "crossplane-system",
    };
    const a8sBinding = {
      ...readyObject(),
      status: {
        atProvider: {
          manifest: {
            status: { implemented: true, secret: { name: "app-db-service-binding", namespace: "team-a" } },
          },
        },
        conditions: [{ type: "Ready", status: "True" }],
      },
    };
    const composite = { ...BINDING, spec: { instanceRef: "pg", serviceInstanceType: "postgresql" } };
    const first = await run({
      input: a8sInput,
      composite,
      observed: { binding: a8sBinding },
      observedDetails: { binding: BACKEND },
    });
    assert.deepEqual(results(first), []);
    assert.equal(spec(first, "binding").forProvider.manifest.kind, "ServiceBinding");
    assert.deepEqual(details(first.desired!.composite!.connectionDetails), BACKEND);
    // On the claim too, where its owner looks.
    assert.deepEqual(
      conditions(first).map((c) => [c.type, c.status, c.reason, c.target]),
      [
        [
          "BindingImplemented",
          Status.STATUS_CONDITION_TRUE,
          "Implemented",
          Target.TARGET_COMPOSITE_AND_CLAIM,
        ],
      ],
    );
    const rsp = await run({
      input: { ...INPUT, credentialsFrom: "binding" },
      composite,
      desired: { binding: first.desired!.resources.binding!.resource! },
      desiredComposite: first.desired!.composite!.resource!,
      desiredCompositeDetails: details(first.desired!.composite!.connectionDetails),
      observed: {
        binding: a8sBinding,
        connection: observedConnection({ hostForConsumer: "c.team-a.svc", port: 40001, conditions: [READY] }),
      },
      observedDetails: { binding: BACKEND },
    });
    assert.deepEqual(Object.keys(rsp.desired!.resources), ["binding", "connection"]);
    assert.equal(spec(rsp, "connection").instanceHost, BACKEND.instance_service);
    assert.equal(spec(rsp, "connection").port, 5432);
    assert.deepEqual(details(rsp.desired!.composite!.connectionDetails), {
      ...BACKEND,
      instance_service: "c.team-a.svc",
      host: "c.team-a.svc",
      port: "40001",
    });
    assert.deepEqual(rsp.desired!.composite!.resource!.status.managed, {
      implemented: true,
      secret: { name: "app-db-service-binding", namespace: "team-a" },
    });
  });

  it("a NetworkConnection input without a port: fatal, naming both ways to give one", async () => {
    const noPort: Json = { ...INPUT };
    delete noPort.defaultPort;
    const rsp = await run({ input: noPort, composite: BINDING });
    assert.equal(rsp.results[0]!.severity, Severity.SEVERITY_FATAL);
    assert.match(
      rsp.results[0]!.message,
      /^invalid function-klutch input: input has neither portKey nor defaultPort/,
    );
  });

  it("an unknown kind: fatal, naming the kinds it knows", async () => {
    const rsp = await run({
      input: { apiVersion: INPUT_API_VERSION, kind: "PostgresqlBinding" },
      composite: BINDING,
    });
    assert.deepEqual(results(rsp), [
      [
        Severity.SEVERITY_FATAL,
        'invalid function-klutch input: the input has apiVersion "fn.klutch.anynines.com/v1alpha1", kind "PostgresqlBinding"; ' +
          "function-klutch takes apiVersion fn.klutch.anynines.com/v1alpha1, kind Resources, LocalPostgresqlInstance, LocalPostgresqlBinding, LocalPostgresqlBackup, LocalPostgresqlRestore, A8sServiceBinding, A9sServiceBinding, NetworkConnection or NetworkConnections",
      ],
    ]);
  });
});

describe("composition function: compose, the NetworkConnections step after provider-anynines' binding", () => {
  const INPUT = {
    apiVersion: INPUT_API_VERSION,
    kind: NETWORK_CONNECTIONS_KIND,
    credentialsFrom: "a9s-servicebinding",
    implementation: "proxy",
  };
  const BINDING = {
    apiVersion: "anynines.com/v1",
    kind: "XServiceBinding",
    metadata: { name: "mq-9fk2d", uid: "b-1", labels: CLAIMED("mq") },
    spec: { instanceRef: "rabbit", serviceInstanceType: "messaging" },
  };
  // provider-anynines' flattened Messaging credentials (services/messaging/credentials.test.ts).
  const CREDS = {
    http_api_uri: "https://u:pw@hxxx.service:15672/api/",
    "protocols.amqp_ssl.uri": "amqps://u:pw@hxxx.service:5671",
  };
  const connection = (port: number): Json => ({
    apiVersion: "klutch.anynines.com/v1",
    kind: "XTCPConnection",
    spec: { instanceHost: "hxxx.service", port },
    status: {
      hostForConsumer: "np.app",
      port: port + 30000,
      conditions: [{ type: "Ready", status: "True", reason: "Available" }],
    },
  });

  it("composes a connection per endpoint beside the binding, and on the wire publishes the rewritten credentials once both are Ready", async () => {
    const first = await run({
      input: INPUT,
      composite: BINDING,
      desired: { "a9s-servicebinding": readyObject() },
      observed: { "a9s-servicebinding": readyObject() },
      observedDetails: { "a9s-servicebinding": CREDS },
    });
    assert.deepEqual(Object.keys(first.desired!.resources).sort(), [
      "a9s-servicebinding",
      "connection-amqp-ssl",
      "connection-http-api",
    ]);
    assert.deepEqual(first.desired!.composite!.connectionDetails, {});
    assert.equal(first.desired!.composite!.ready, Ready.READY_FALSE);

    const rsp = await run({
      input: INPUT,
      composite: BINDING,
      desired: { "a9s-servicebinding": readyObject() },
      observed: {
        "a9s-servicebinding": readyObject(),
        "connection-http-api": connection(15672),
        "connection-amqp-ssl": connection(5671),
      },
      observedDetails: { "a9s-servicebinding": CREDS },
    });
    assert.deepEqual(details(rsp.desired!.composite!.connectionDetails), {
      http_api_uri: "https://u:pw@np.app:45672/api/",
      "protocols.amqp_ssl.uri": "amqps://u:pw@np.app:35671",
    });
    assert.deepEqual(
      conditions(rsp).map((c) => [c.type, c.status, c.reason]),
      [["ConnectionReady", Status.STATUS_CONDITION_TRUE, "ConnectionEstablished"]],
    );
  });
});
