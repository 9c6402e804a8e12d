import { strict as assert } from "node:assert";
import {
  Ready,
  RunFunctionRequest,
  RunFunctionResponse,
  Severity,
  fromCompose,
} from "@crossplane-org/function-sdk-typescript";
import {
  KLUTCH_FUNCTION,
  NOOP_IMPLEMENTATION,
  compositionName as connectorCompositionName,
  noopComposition,
  pulumiBackedComposition,
  renderPipeline,
  type CompositionModel,
} from "../../lib/connector-api/compositions.js";
import {
  CONNECTOR_GROUP,
  CONNECTOR_VERSION,
  NETWORK_PATH_API_VERSION,
  XR_KIND,
} from "../../lib/connector-api/names.js";
import { IMPLEMENTATION_NAMES } from "../../network/registry.js";
import { compose } from "./compose.js";
import { compositionName } from "./network-connection.js";
import { FUNCTION_NAME, INPUT_API_VERSION } from "./input.js";

type Json = Record<string, any>;

/**
 * Every composition this project renders, run through this function as Crossplane would run its
 * pipeline step: the input exactly as renderPipeline writes it for this function.
 */
const models: CompositionModel[] = [
  noopComposition(),
  ...IMPLEMENTATION_NAMES.filter((i) => i !== NOOP_IMPLEMENTATION).map((i) => pulumiBackedComposition(i)),
];

function inputOf(model: CompositionModel): Json {
  return renderPipeline(model, {}, KLUTCH_FUNCTION).spec.pipeline[0]!.input;
}

/** An XTCPConnection as Crossplane observes it for a claim in namespace team-a. */
function xtcpConnection(
  model: CompositionModel,
  spec: Json = { instanceHost: "pg.example.internal", port: 5432 },
): Json {
  return {
    apiVersion: `${CONNECTOR_GROUP}/${CONNECTOR_VERSION}`,
    kind: XR_KIND,
    metadata: {
      name: "team-a-pg-7x2kq",
      labels: {
        "crossplane.io/claim-name": "pg",
        "crossplane.io/claim-namespace": "team-a",
        "crossplane.io/composite": "team-a-pg-7x2kq",
      },
      uid: "0b8c5f0e-3d0f-4c0e-9d55-1f1f3c7f7a11",
    },
    spec: { ...spec, compositionRef: { name: model.name } },
    status: { conditions: [{ type: "Synced", status: "True", reason: "ReconcileSuccess" }] },
  };
}

async function run(input: Json, xr: Json, observed: Record<string, Json> = {}): Promise<RunFunctionResponse> {
  const req = RunFunctionRequest.fromPartial({
    meta: { tag: "conformance" },
    input,
    observed: {
      composite: { resource: xr },
      resources: Object.fromEntries(Object.entries(observed).map(([k, resource]) => [k, { resource }])),
    },
    desired: { composite: { resource: {} }, resources: {} },
  });
  const wire = RunFunctionRequest.decode(RunFunctionRequest.encode(req).finish());
  const rsp = await fromCompose(compose).RunFunction(wire);
  return RunFunctionResponse.decode(RunFunctionResponse.encode(rsp).finish());
}

describe("composition function: the project's connector compositions", () => {
  it("selects each implementation's composition by the name the connector gives it", () => {
    // A binding composition passes the implementation in lower case (lib/dataservices/compositions.ts).
    for (const implementation of IMPLEMENTATION_NAMES)
      assert.equal(
        compositionName(implementation.toLowerCase()),
        connectorCompositionName(implementation),
        implementation,
      );
    assert.ok(IMPLEMENTATION_NAMES.includes("awsVpcPeering"), "a name with capitals is among them");
  });

  it("are rendered for this function: its name and its input's apiVersion", () => {
    assert.deepEqual(KLUTCH_FUNCTION, { name: FUNCTION_NAME, inputApiVersion: INPUT_API_VERSION });
    for (const model of models) {
      const step = renderPipeline(model, {}, KLUTCH_FUNCTION).spec.pipeline[0]!;
      assert.equal(step.functionRef.name, FUNCTION_NAME);
      assert.equal(step.input.apiVersion, INPUT_API_VERSION);
    }
  });

  for (const model of models) {
    const input = inputOf(model);
    const resourceName = (input.resources as Json[])[0]!.name as string;
    const reportsBack = model.implementation !== NOOP_IMPLEMENTATION;

    describe(model.name, () => {
      it("the input is accepted and composes exactly one NetworkPath from the XR", async () => {
        const rsp = await run(input, xtcpConnection(model));
        assert.deepEqual(rsp.results, []);
        assert.deepEqual(Object.keys(rsp.desired!.resources), [resourceName]);
        const np = rsp.desired!.resources[resourceName]!;
        assert.deepEqual(np.resource, {
          apiVersion: NETWORK_PATH_API_VERSION,
          kind: "NetworkPath",
          spec: {
            implementation: model.implementation,
            consumerNamespace: "team-a",
            connection: "team-a-pg-7x2kq",
            instanceHost: "pg.example.internal",
            port: 5432,
          },
        });
        assert.equal(np.ready, Ready.READY_FALSE);
        assert.deepEqual(rsp.desired!.composite!.resource, {
          apiVersion: `${CONNECTOR_GROUP}/${CONNECTOR_VERSION}`,
          kind: XR_KIND,
        });
      });

      it("carries the enhancements through when the XR has them", async () => {
        const enhancements = [{ ConnectionType: "wireguardVPN", vpnEndpoint: "vpn.example.com:51820" }];
        const xr = xtcpConnection(model, { instanceHost: "10.0.0.7", port: 1, enhancements });
        const rsp = await run(input, xr);
        const spec = (rsp.desired!.resources[resourceName]!.resource as Json).spec as Json;
        assert.deepEqual([spec.instanceHost, spec.port, spec.enhancements], ["10.0.0.7", 1, enhancements]);
      });

      it("holds the NetworkPath back, with a warning, until the XR has its instance host", async () => {
        const rsp = await run(input, xtcpConnection(model, { port: 5432 }));
        assert.deepEqual(rsp.desired!.resources, {});
        assert.equal(rsp.desired!.composite!.ready, Ready.READY_FALSE);
        assert.deepEqual(
          rsp.results.map((r) => r.severity),
          [Severity.SEVERITY_WARNING],
        );
        assert.match(rsp.results[0]!.message, new RegExp(`"${resourceName}".*"spec\\.instanceHost"`));
      });

      const observedPath = (status: Json): Json => ({
        apiVersion: NETWORK_PATH_API_VERSION,
        kind: "NetworkPath",
        metadata: {
          name: "team-a-pg-7x2kq-4fj9d",
          annotations: { "crossplane.io/composition-resource-name": resourceName },
        },
        spec: { implementation: model.implementation, connection: "team-a-pg-7x2kq" },
        status,
      });

      if (reportsBack) {
        it("copies the bridge's result into the XR once the NetworkPath is Ready", async () => {
          const np = observedPath({
            hostForConsumer: "pg.team-a.svc.cluster.local",
            port: 40001,
            conditions: [{ type: "Ready", status: "True", reason: "ConnectivityEstablished" }],
          });
          const rsp = await run(input, xtcpConnection(model), { [resourceName]: np });
          assert.deepEqual(rsp.results, []);
          const desired = rsp.desired!.resources[resourceName]!;
          assert.equal(desired.ready, Ready.READY_TRUE);
          assert.equal((desired.resource as Json).metadata.name, "team-a-pg-7x2kq-4fj9d");
          assert.deepEqual(rsp.desired!.composite!.resource, {
            apiVersion: `${CONNECTOR_GROUP}/${CONNECTOR_VERSION}`,
            kind: XR_KIND,
            status: { hostForConsumer: "pg.team-a.svc.cluster.local", port: 40001 },
          });
          assert.notEqual(rsp.desired!.composite!.ready, Ready.READY_FALSE);
        });

        it("is not ready, and copies nothing, while the bridge has not reported", async () => {
          const rsp = await run(input, xtcpConnection(model), { [resourceName]: observedPath({}) });
          assert.equal(rsp.desired!.resources[resourceName]!.ready, Ready.READY_FALSE);
          assert.equal(rsp.desired!.composite!.resource!.status, undefined);
        });
      } else {
        it("counts the marker ready as soon as it exists, and copies nothing back", async () => {
          const rsp = await run(input, xtcpConnection(model), { [resourceName]: observedPath({}) });
          assert.equal(rsp.desired!.resources[resourceName]!.ready, Ready.READY_TRUE);
          assert.equal(rsp.desired!.composite!.resource!.status, undefined);
        });
      }
    });
  }
});
