import { strict as assert } from "node:assert";
import {
  CONNECTION_SECRETS_NAMESPACE,
  NETWORK_SERVICE_BINDING,
  A9S_NETWORK_SERVICE_BINDING,
  a8sNetworkServiceBindingComposition,
  a9sNetworkServiceBindingComposition,
  localBackupComposition,
  localPostgresqlComposition,
  localRestoreComposition,
  localServiceBindingComposition,
  networkServiceBindingComposition,
  networkServiceBindingName,
} from "./compositions";
import { postgresqlInstanceXrd, serviceBindingXrd } from "./xrds";
import { backupXrd, restoreXrd } from "./backup-xrds";

const backend = { image: "klutch.local/postgres:15.18-0123456789ab" };
type Json = any;

describe("the data-service compositions (pure)", () => {
  it("the local backend takes a8s's names, which upstream's XRDs default to and admit", () => {
    const pg: Json = localPostgresqlComposition(backend);
    const binding: Json = localServiceBindingComposition(backend);
    assert.equal(pg.metadata.name, (postgresqlInstanceXrd() as Json).spec.defaultCompositionRef.name);
    assert.equal(binding.metadata.name, (serviceBindingXrd() as Json).spec.defaultCompositionRef.name);
    assert.deepEqual(pg.spec.compositeTypeRef, {
      apiVersion: "anynines.com/v1",
      kind: "XPostgresqlInstance",
    });
    assert.deepEqual(pg.spec.pipeline, [
      {
        step: "instance",
        functionRef: { name: "function-klutch" },
        input: {
          apiVersion: "fn.klutch.anynines.com/v1alpha1",
          kind: "LocalPostgresqlInstance",
          image: backend.image,
          imagePullPolicy: "Never",
          providerConfigName: "kubernetes-provider",
        },
      },
    ]);
  });

  it("the local Backup and Restore take a8s's names, which upstream's XRDs default to, each one step of Klutch's function", () => {
    for (const [c, xrd, kind, input] of [
      [localBackupComposition(backend), backupXrd(), "XBackup", "LocalPostgresqlBackup"],
      [localRestoreComposition(backend), restoreXrd(), "XRestore", "LocalPostgresqlRestore"],
    ] as [Json, Json, string, string][]) {
      assert.equal(c.metadata.name, xrd.spec.defaultCompositionRef.name);
      assert.deepEqual(c.spec.compositeTypeRef, { apiVersion: "anynines.com/v1", kind });
      assert.deepEqual(
        c.spec.pipeline.map((s: Json) => [s.functionRef.name, s.input.kind, s.input.image]),
        [["function-klutch", input, backend.image]],
      );
    }
  });

  it("the network-aware binding runs the backend's binding, then the connection step, and writes connection Secrets", () => {
    const c: Json = networkServiceBindingComposition(backend);
    assert.equal(c.metadata.name, NETWORK_SERVICE_BINDING);
    assert.equal(c.spec.mode, "Pipeline");
    assert.equal(c.spec.writeConnectionSecretsToNamespace, CONNECTION_SECRETS_NAMESPACE);
    assert.deepEqual(
      c.spec.pipeline.map((s: Json) => [s.step, s.input.kind]),
      [
        ["binding", "LocalPostgresqlBinding"],
        ["network-connection", "NetworkConnection"],
      ],
    );
    // The backend's binding step is the same as in its own composition.
    assert.deepEqual(c.spec.pipeline[0], (localServiceBindingComposition(backend) as Json).spec.pipeline[0]);
    assert.deepEqual(c.spec.pipeline[1].input, {
      apiVersion: "fn.klutch.anynines.com/v1alpha1",
      kind: "NetworkConnection",
      credentialsFrom: "credentials",
      hostKey: "instance_service",
      defaultPort: 5432,
    });
  });

  it("a network-aware binding per implementation: named after it, its connection asking for that implementation's composition", () => {
    const c: Json = networkServiceBindingComposition(backend, {}, "noop");
    assert.equal(c.metadata.name, "a8s-servicebinding-network-noop");
    assert.equal(networkServiceBindingName("noop"), c.metadata.name);
    assert.equal(networkServiceBindingName(), NETWORK_SERVICE_BINDING);
    assert.equal(c.spec.pipeline[1].input.implementation, "noop");
    // Otherwise the same pipeline as the default's.
    assert.deepEqual(
      { ...c.spec.pipeline[1].input, implementation: undefined },
      {
        ...(networkServiceBindingComposition(backend) as Json).spec.pipeline[1].input,
        implementation: undefined,
      },
    );
    assert.deepEqual(
      c.spec.pipeline[0],
      (networkServiceBindingComposition(backend) as Json).spec.pipeline[0],
    );
  });

  it("where a8s serves the instances: a8s's own binding, then the same connection step on its credentials", () => {
    const c: Json = a8sNetworkServiceBindingComposition({ team: "data" }, "wireguard");
    assert.equal(c.metadata.name, "a8s-servicebinding-network-wireguard");
    assert.deepEqual(c.metadata.labels, { team: "data" });
    assert.deepEqual(c.spec.compositeTypeRef, { apiVersion: "anynines.com/v1", kind: "XServiceBinding" });
    assert.equal(c.spec.writeConnectionSecretsToNamespace, CONNECTION_SECRETS_NAMESPACE);
    assert.deepEqual(c.spec.pipeline[0], {
      step: "binding",
      functionRef: { name: "function-klutch" },
      input: {
        apiVersion: "fn.klutch.anynines.com/v1alpha1",
        kind: "A8sServiceBinding",
        // Upstream's a8s-servicebinding names this ProviderConfig too.
        providerConfigName: "kubernetes-provider",
        connectionSecretNamespace: CONNECTION_SECRETS_NAMESPACE,
      },
    });
    // The connection reads the a8s Object's connection details: its step name.
    assert.deepEqual(c.spec.pipeline[1].input, {
      ...(networkServiceBindingComposition(backend, {}, "wireguard") as Json).spec.pipeline[1].input,
      credentialsFrom: "binding",
    });
    assert.equal((a8sNetworkServiceBindingComposition() as Json).metadata.name, NETWORK_SERVICE_BINDING);
    // An implementation's name in camel case: lower case, as object names and the connector's
    // composition names (xtcpconnections-awsvpcpeering) are.
    const peering: Json = a8sNetworkServiceBindingComposition({}, "awsVpcPeering");
    assert.equal(peering.metadata.name, "a8s-servicebinding-network-awsvpcpeering");
    assert.equal(peering.spec.pipeline[1].input.implementation, "awsvpcpeering");
  });

  it("where anynines' brokers serve the instances: provider-anynines' binding, then one connection per endpoint", () => {
    const c: Json = a9sNetworkServiceBindingComposition({ team: "data" }, "awsVpcPeering");
    assert.equal(c.metadata.name, "a9s-servicebinding-network-awsvpcpeering");
    assert.equal(c.spec.writeConnectionSecretsToNamespace, CONNECTION_SECRETS_NAMESPACE);
    assert.deepEqual(
      c.spec.pipeline.map((p: Json) => [p.step, p.functionRef.name, p.input]),
      [
        [
          "binding",
          "function-klutch",
          { apiVersion: "fn.klutch.anynines.com/v1alpha1", kind: "A9sServiceBinding" },
        ],
        [
          "network-connections",
          "function-klutch",
          {
            apiVersion: "fn.klutch.anynines.com/v1alpha1",
            kind: "NetworkConnections",
            credentialsFrom: "a9s-servicebinding",
            implementation: "awsvpcpeering",
          },
        ],
      ],
    );
    assert.equal((a9sNetworkServiceBindingComposition() as Json).metadata.name, A9S_NETWORK_SERVICE_BINDING);
    assert.equal(
      (a9sNetworkServiceBindingComposition() as Json).spec.pipeline[1].input.implementation,
      undefined,
    );
  });

  it("instance names: the a8s and a9s bindings' connection steps get the zones; without zones, no field", () => {
    const zones = ["service.dc1.consul"];
    const step = (c: Json) => c.spec.pipeline[1].input;
    assert.deepEqual(step(a9sNetworkServiceBindingComposition({}, "proxy", zones)).instanceZones, zones);
    assert.deepEqual(step(a8sNetworkServiceBindingComposition({}, "proxy", zones)).instanceZones, zones);
    assert.equal("instanceZones" in step(a9sNetworkServiceBindingComposition({}, "proxy")), false);
    assert.equal("instanceZones" in step(networkServiceBindingComposition(backend, {}, "proxy")), false);
  });

  it("upstream's XRDs: names, claims and the CEL rule that ties other types to other compositions", () => {
    const sb: Json = serviceBindingXrd();
    assert.equal(sb.metadata.name, "xservicebindings.anynines.com");
    assert.deepEqual(sb.spec.claimNames, { kind: "ServiceBinding", plural: "servicebindings" });
    const spec = sb.spec.versions[0].schema.openAPIV3Schema.properties.spec;
    assert.deepEqual(spec.required, ["instanceRef", "serviceInstanceType"]);
    assert.match(spec["x-kubernetes-validations"][0].rule, /self\.serviceInstanceType == 'postgresql'/);
    const pg: Json = postgresqlInstanceXrd();
    assert.equal(pg.spec.defaultCompositeDeletePolicy, "Foreground");
    const pgSpec = pg.spec.versions[0].schema.openAPIV3Schema.properties.spec;
    assert.deepEqual(pgSpec.required, ["service", "plan"]);
    assert.equal(Object.keys(pgSpec.properties.parameters.properties).length, 24);
  });
});
