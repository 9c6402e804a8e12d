import { strict as assert } from "node:assert";
import {
  Ready,
  RunFunctionRequest,
  RunFunctionResponse,
  Severity,
  fromCompose,
} from "@crossplane-org/function-sdk-typescript";
import { compose } from "./compose.js";
import { INPUT_API_VERSION, RESOURCES_KIND } from "./input.js";

type Json = Record<string, unknown>;

const INPUT = {
  apiVersion: INPUT_API_VERSION,
  kind: RESOURCES_KIND,
  resources: [
    {
      name: "network-path",
      base: {
        apiVersion: "klutch.anynines.com/v1alpha1",
        kind: "NetworkPath",
        spec: { implementation: "proxy" },
      },
      patches: [
        {
          type: "FromCompositeFieldPath",
          fromFieldPath: "metadata.labels[crossplane.io/claim-namespace]",
          toFieldPath: "spec.consumerNamespace",
        },
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
      ],
      readinessChecks: [{ type: "MatchCondition", matchCondition: { type: "Ready", status: "True" } }],
    },
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
  desired?: Record<string, Json>;
  desiredComposite?: Json;
}): Promise<RunFunctionResponse> {
  const wrap = (resources: Record<string, Json> = {}) =>
    Object.fromEntries(Object.entries(resources).map(([k, resource]) => [k, { resource }]));
  const req = RunFunctionRequest.fromPartial({
    meta: { tag: "t" },
    input: request.input,
    observed: { composite: { resource: request.composite ?? XR }, resources: wrap(request.observed) },
    desired: {
      ...(request.desiredComposite ? { composite: { resource: request.desiredComposite } } : {}),
      resources: wrap(request.desired),
    },
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
