import { strict as assert } from "node:assert";
import * as k8s from "@pulumi/kubernetes";
import { NetworkConnectorApi } from "./connector-api";
import { CONNECTION_TYPES, connectorSchema, connectorXrd } from "../../lib/connector-api/xrd";
import {
  noopComposition,
  pulumiBackedComposition,
  renderPipeline,
  renderResourcesMode,
} from "../../lib/connector-api/compositions";
import { networkPathCrd } from "../../lib/connector-api/network-path-crd";
import { mockPulumi, settle } from "../../test/helpers/mocks";

describe("network connector API (pure)", () => {
  it("defines XTCPConnection in klutch.anynines.com/v1 with the claim TCPConnection", () => {
    const xrd = connectorXrd("xtcpconnections-proxy");
    assert.equal(xrd.metadata.name, "xtcpconnections.klutch.anynines.com");
    assert.deepEqual(xrd.spec.names, { kind: "XTCPConnection", plural: "xtcpconnections" });
    assert.deepEqual(xrd.spec.claimNames, { kind: "TCPConnection", plural: "tcpconnections" });
    assert.equal(xrd.spec.versions[0]?.name, "v1");
    assert.deepEqual(xrd.spec.defaultCompositionRef, { name: "xtcpconnections-proxy" });
  });

  it("requires instanceHost and a port in 1..65535, and types every enhancement", () => {
    const schema = connectorSchema() as any;
    const spec = schema.properties.spec;
    assert.deepEqual(spec.required, ["instanceHost", "port"]);
    assert.deepEqual([spec.properties.port.minimum, spec.properties.port.maximum], [1, 65535]);
    const item = spec.properties.enhancements.items;
    assert.deepEqual(item.properties.ConnectionType.enum, Object.keys(CONNECTION_TYPES));
    assert.deepEqual(item.oneOf, [{ required: ["InstanceType"] }, { required: ["ConnectionType"] }]);
    const rules = item["x-kubernetes-validations"].map((r: any) => r.message);
    assert.ok(rules.includes("vpnEndpoint is required for ConnectionType wireguardVPN"));
    assert.ok(rules.includes("instanceVPC is required for ConnectionType awsVPCPeering"));
    assert.ok(rules.includes("appClusterVPC is required for ConnectionType awsVPCPeering"));
    const status = schema.properties.status.properties;
    assert.deepEqual(Object.keys(status).sort(), ["conditions", "hostForConsumer", "port"]);
  });

  it("renders one model as both Pipeline (production) and Resources (local) compositions", () => {
    const model = pulumiBackedComposition("proxy");
    const pipeline = renderPipeline(model) as any;
    const resources = renderResourcesMode(model) as any;
    assert.equal(pipeline.spec.mode, "Pipeline");
    assert.equal(pipeline.spec.pipeline[0].functionRef.name, "function-patch-and-transform");
    assert.equal(pipeline.spec.pipeline[0].input.kind, "Resources");
    assert.equal(resources.spec.mode, "Resources");
    // Same composed resources, patches and readiness in both forms.
    assert.deepEqual(pipeline.spec.pipeline[0].input.resources, resources.spec.resources);
    const patches = resources.spec.resources[0].patches.map(
      (p: any) => `${p.fromFieldPath}->${p.toFieldPath}`,
    );
    assert.ok(patches.includes("status.hostForConsumer->status.hostForConsumer"));
    assert.ok(patches.includes("status.port->status.port"));
    assert.ok(patches.includes("spec.instanceHost->spec.instanceHost"));
    assert.equal(pipeline.metadata.labels["klutch.anynines.com/implementation"], "proxy");
  });

  it("NOOP composes one inert, always-ready marker, the same in both forms", () => {
    const noop = noopComposition();
    // function-patch-and-transform refuses an input without resources, as Resources mode does.
    assert.deepEqual(
      (renderPipeline(noop) as any).spec.pipeline[0].input.resources,
      (renderResourcesMode(noop) as any).spec.resources,
    );
    const res = (renderResourcesMode(noop) as any).spec.resources;
    assert.equal(res.length, 1);
    // A cluster-scoped NetworkPath: Crossplane 1.x cannot read a namespaced composed resource back.
    assert.equal(res[0].base.kind, "NetworkPath");
    assert.deepEqual(res[0].base.spec, { implementation: "noop" });
    assert.deepEqual(res[0].readinessChecks, [{ type: "None" }]);
    const patches = res[0].patches.map((p: any) => `${p.type}:${p.fromFieldPath}->${p.toFieldPath}`);
    assert.ok(patches.includes("FromCompositeFieldPath:spec.instanceHost->spec.instanceHost"));
    assert.ok(
      patches.every((p: string) => p.startsWith("FromCompositeFieldPath:")),
      "nothing is copied back: nobody realises a NOOP path",
    );
  });

  it("NetworkPath carries the connection's spec plus implementation and a status subresource", () => {
    const crd = networkPathCrd();
    const v = crd.spec.versions[0] as any;
    // Crossplane 1.x composes only cluster-scoped resources (it records them by name).
    assert.equal(crd.spec.scope, "Cluster");
    assert.ok("consumerNamespace" in v.schema.openAPIV3Schema.properties.spec.properties);
    assert.deepEqual(v.subresources, { status: {} });
    assert.deepEqual(v.schema.openAPIV3Schema.properties.spec.required, [
      "implementation",
      "connection",
      "instanceHost",
      "port",
    ]);
    assert.ok("observedGeneration" in v.schema.openAPIV3Schema.properties.status.properties);
  });
});

describe("NetworkConnectorApi (mocks)", () => {
  it("creates the XRD, the NetworkPath CRD and one composition per implementation, NOOP included", async () => {
    const run = mockPulumi({});
    new NetworkConnectorApi("api", {
      provider: new k8s.Provider("cp", {}),
      implementations: ["proxy", "wireguard", "proxy", "noop"],
      defaultImplementation: "proxy",
      compositionMode: "Pipeline",
      labels: {},
    });
    await settle();
    assert.equal(
      run.ofType("kubernetes:apiextensions.crossplane.io/v1:CompositeResourceDefinition").length,
      1,
    );
    assert.equal(run.ofType("kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition").length, 1);
    assert.deepEqual(
      run
        .ofType("kubernetes:apiextensions.crossplane.io/v1:Composition")
        .map((c) => c.inputs.metadata.name)
        .sort(),
      ["xtcpconnections-noop", "xtcpconnections-proxy", "xtcpconnections-wireguard"],
    );
    // Crossplane core (a pod, with its own ServiceAccount) may compose NetworkPaths and
    // nothing more: the one ClusterRole the chart's `crossplane` role aggregates.
    const roles = run.ofType("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole");
    assert.deepEqual(
      roles.map((r) => r.inputs),
      [
        {
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind: "ClusterRole",
          metadata: {
            name: "klutch:crossplane:networkpaths",
            labels: { "rbac.crossplane.io/aggregate-to-crossplane": "true" },
          },
          rules: [
            {
              apiGroups: ["klutch.anynines.com"],
              resources: ["networkpaths"],
              verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
            },
          ],
        },
      ],
    );
  });

  it("refuses a default implementation it does not install, before registering anything", async () => {
    const run = mockPulumi({});
    const provider = new k8s.Provider("cp", {});
    await settle();
    const before = run.resources.length;
    assert.throws(
      () =>
        new NetworkConnectorApi("api", {
          provider,
          implementations: ["wireguard"],
          defaultImplementation: "proxy",
          compositionMode: "Resources",
          labels: {},
        }),
      /defaultImplementation "proxy" is not among noop, wireguard/,
    );
    await settle();
    assert.equal(run.resources.length, before, "nothing was registered");
  });
});
