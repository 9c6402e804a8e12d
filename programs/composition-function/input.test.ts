import { strict as assert } from "node:assert";
import {
  INPUT_API_VERSION,
  InputError,
  A8S_SERVICE_BINDING_KIND,
  LOCAL_POSTGRESQL_BACKUP_KIND,
  LOCAL_POSTGRESQL_BINDING_KIND,
  LOCAL_POSTGRESQL_INSTANCE_KIND,
  LOCAL_POSTGRESQL_RESTORE_KIND,
  NETWORK_CONNECTION_KIND,
  RESOURCES_KIND,
  parseInput,
  type ResourceTemplate,
} from "./input.js";
import { networkPathTemplate } from "./test-helpers.js";

const resource = (extra: Record<string, unknown> = {}) =>
  networkPathTemplate(
    [
      {
        type: "FromCompositeFieldPath",
        fromFieldPath: "spec.port",
        toFieldPath: "spec.port",
        policy: { fromFieldPath: "Required" },
      },
      { type: "ToCompositeFieldPath", fromFieldPath: "status.port" },
    ],
    extra,
  );
const input = (resources: unknown, extra: Record<string, unknown> = {}) => ({
  apiVersion: INPUT_API_VERSION,
  kind: RESOURCES_KIND,
  resources,
  ...extra,
});

function templates(value: unknown): ResourceTemplate[] {
  const parsed = parseInput(value);
  assert.equal(parsed.kind, RESOURCES_KIND);
  return parsed.kind === RESOURCES_KIND ? parsed.resources : [];
}

function refuses(value: unknown, message: RegExp): void {
  assert.throws(
    () => parseInput(value),
    (e: unknown) => e instanceof InputError && message.test(e.message),
  );
}

describe("composition function: input", () => {
  it("turns the input into typed templates, defaulting policy and toFieldPath", () => {
    assert.deepEqual(templates(input([resource()])), [
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
            fromFieldPathPolicy: "Optional",
          },
          {
            type: "FromCompositeFieldPath",
            fromFieldPath: "spec.port",
            toFieldPath: "spec.port",
            fromFieldPathPolicy: "Required",
          },
          {
            type: "ToCompositeFieldPath",
            fromFieldPath: "status.port",
            toFieldPath: "status.port",
            fromFieldPathPolicy: "Optional",
          },
        ],
        readinessChecks: [{ type: "MatchCondition", matchCondition: { type: "Ready", status: "True" } }],
      },
    ]);
  });

  it("takes a resource without patches or readiness checks, and a None check", () => {
    const [t] = templates(
      input([{ ...resource(), patches: undefined, readinessChecks: [{ type: "None" }] }]),
    );
    assert.deepEqual(t!.patches, []);
    assert.deepEqual(t!.readinessChecks, [{ type: "None" }]);
  });

  it("refuses a missing input, naming what it expects", () => {
    refuses(undefined, /has input nothing; function-klutch needs an input with apiVersion fn\.klutch/);
    refuses({}, /has input \{\}/);
  });

  it("refuses another apiVersion or kind, naming both what it got and what it takes", () => {
    refuses(
      { ...input([resource()]), apiVersion: "pt.fn.crossplane.io/v1beta1" },
      /apiVersion "pt\.fn\.crossplane\.io\/v1beta1", kind "Resources"; function-klutch takes apiVersion fn\.klutch\.anynines\.com\/v1alpha1, kind Resources/,
    );
    refuses(
      { ...input([resource()]), kind: "Other" },
      /kind "Other"; function-klutch takes apiVersion fn\.klutch\.anynines\.com\/v1alpha1, kind Resources, LocalPostgresqlInstance, LocalPostgresqlBinding, LocalPostgresqlBackup, LocalPostgresqlRestore, A8sServiceBinding, A9sServiceBinding, NetworkConnection or NetworkConnections$/,
    );
  });

  it("requires resources, as function-patch-and-transform does", () => {
    refuses(input([]), /resources are required/);
    refuses(input(undefined), /resources are required/);
    refuses(input({ a: 1 }), /input\.resources is \{"a":1\}; it must be a list/);
  });

  it("refuses an unknown patch type, naming the resource, the index and the value", () => {
    const patches = [...resource().patches, { type: "CombineFromComposite", combine: {} }];
    refuses(
      input([resource({ patches })]),
      /input\.resources\[0\] "network-path": patches\[3\]\.type is "CombineFromComposite"; function-klutch supports patch types FromCompositeFieldPath, ToCompositeFieldPath/,
    );
  });

  it("refuses an unknown readiness check type, naming the resource, the index and the value", () => {
    refuses(
      input([resource({ readinessChecks: [{ type: "None" }, { type: "MatchString", fieldPath: "x" }] })]),
      /input\.resources\[0\] "network-path": readinessChecks\[1\]\.type is "MatchString"; function-klutch supports readiness check types MatchCondition, None/,
    );
  });

  it("refuses what it would otherwise ignore: transforms, patch sets, environment", () => {
    const patches = [{ ...resource().patches[0], transforms: [{ type: "string" }] }];
    refuses(input([resource({ patches })]), /patches\[0\]: unsupported field "transforms"/);
    refuses(input([resource()], { patchSets: [] }), /input: unsupported field "patchSets"/);
    refuses(
      input([resource({ connectionDetails: [] })]),
      /input\.resources\[0\]: unsupported field "connectionDetails"/,
    );
  });

  it("refuses malformed resources, patches and checks with the field and the fix", () => {
    refuses(
      input([resource({ name: "" })]),
      /input\.resources\[0\]\.name is ""; it must be a non-empty string/,
    );
    refuses(
      input([resource({ base: undefined })]),
      /"network-path": base is nothing; it must be the composed resource's manifest/,
    );
    refuses(input([resource({ base: { kind: "NetworkPath" } })]), /base\.apiVersion is nothing/);
    refuses(input([resource(), resource()]), /input\.resources\[1\]\.name "network-path" is used twice/);
    refuses(
      input([resource({ patches: [{ type: "FromCompositeFieldPath", fromFieldPath: "spec..port" }] })]),
      /patches\[0\]\.fromFieldPath: invalid field path "spec\.\.port": unexpected "\." at position 5/,
    );
    refuses(
      input([resource({ patches: [{ type: "FromCompositeFieldPath" }] })]),
      /patches\[0\]\.fromFieldPath is nothing; it must be a non-empty string/,
    );
    refuses(
      input([
        resource({
          patches: [
            { type: "FromCompositeFieldPath", fromFieldPath: "a", policy: { fromFieldPath: "Always" } },
          ],
        }),
      ]),
      /patches\[0\]\.policy\.fromFieldPath is "Always"; it must be Optional or Required/,
    );
    refuses(
      input([resource({ readinessChecks: [{ type: "MatchCondition", matchCondition: { type: "Ready" } }] })]),
      /readinessChecks\[0\]\.matchCondition\.status is nothing/,
    );
    refuses(
      input([resource({ readinessChecks: [{ type: "MatchCondition" }] })]),
      /readinessChecks\[0\]\.matchCondition is nothing; type MatchCondition needs matchCondition \{type, status\}/,
    );
  });

  describe("kinds LocalPostgresqlBackup and LocalPostgresqlRestore", () => {
    for (const kind of [LOCAL_POSTGRESQL_BACKUP_KIND, LOCAL_POSTGRESQL_RESTORE_KIND]) {
      const run = (extra: Record<string, unknown> = {}) => ({
        apiVersion: INPUT_API_VERSION,
        kind,
        image: "klutch.local/postgres:15",
        providerConfigName: "local",
        ...extra,
      });
      it(`${kind}: image and providerConfigName, imagePullPolicy defaulting to Never; anything else refused, named`, () => {
        assert.deepEqual(parseInput(run()), {
          kind,
          image: "klutch.local/postgres:15",
          imagePullPolicy: "Never",
          providerConfigName: "local",
        });
        refuses(
          run({ image: "" }),
          /input\.image is ""; it must be a non-empty string \(the PostgreSQL image/,
        );
        refuses(run({ providerConfigName: undefined }), /input\.providerConfigName is nothing/);
        refuses(run({ imagePullPolicy: "Sometimes" }), /input\.imagePullPolicy is "Sometimes"/);
        refuses(run({ clusterDomain: "x" }), /unsupported field "clusterDomain"/);
      });
    }
  });

  describe("kind LocalPostgresqlInstance", () => {
    const instance = (extra: Record<string, unknown> = {}) => ({
      apiVersion: INPUT_API_VERSION,
      kind: LOCAL_POSTGRESQL_INSTANCE_KIND,
      image: "klutch.local/postgres:15",
      providerConfigName: "local",
      ...extra,
    });

    it("takes image and providerConfigName, imagePullPolicy defaulting to Never, clusterDomain to cluster.local", () => {
      assert.deepEqual(parseInput(instance()), {
        kind: LOCAL_POSTGRESQL_INSTANCE_KIND,
        image: "klutch.local/postgres:15",
        imagePullPolicy: "Never",
        providerConfigName: "local",
        clusterDomain: "cluster.local",
      });
      assert.equal(
        (parseInput(instance({ clusterDomain: "corp.example" })) as any).clusterDomain,
        "corp.example",
      );
      assert.equal(
        (parseInput(instance({ imagePullPolicy: "IfNotPresent" })) as any).imagePullPolicy,
        "IfNotPresent",
      );
    });

    it("refuses a missing or malformed field, and fields of other kinds, naming them", () => {
      refuses(
        instance({ image: undefined }),
        /input\.image is nothing; it must be a non-empty string \(the PostgreSQL image/,
      );
      refuses(
        instance({ providerConfigName: 3 }),
        /input\.providerConfigName is 3; it must be a non-empty string/,
      );
      refuses(
        instance({ imagePullPolicy: "never" }),
        /input\.imagePullPolicy is "never"; it must be Never, IfNotPresent, Always/,
      );
      refuses(
        instance({ resources: [] }),
        /input: unsupported field "resources"; function-klutch supports only/,
      );
      refuses(instance({ connectionSecretNamespace: "x" }), /unsupported field "connectionSecretNamespace"/);
    });
  });

  describe("kind LocalPostgresqlBinding", () => {
    const binding = (extra: Record<string, unknown> = {}) => ({
      apiVersion: INPUT_API_VERSION,
      kind: LOCAL_POSTGRESQL_BINDING_KIND,
      image: "klutch.local/postgres:15",
      providerConfigName: "local",
      connectionSecretNamespace: "crossplane-system",
      ...extra,
    });

    it("takes image, providerConfigName and connectionSecretNamespace", () => {
      assert.deepEqual(parseInput(binding({ imagePullPolicy: "Always" })), {
        kind: LOCAL_POSTGRESQL_BINDING_KIND,
        image: "klutch.local/postgres:15",
        imagePullPolicy: "Always",
        providerConfigName: "local",
        connectionSecretNamespace: "crossplane-system",
      });
    });

    it("refuses a connection secret namespace that is no namespace name", () => {
      refuses(
        binding({ connectionSecretNamespace: undefined }),
        /input\.connectionSecretNamespace is nothing/,
      );
      refuses(
        binding({ connectionSecretNamespace: "Crossplane_System" }),
        /input\.connectionSecretNamespace is "Crossplane_System"; it must be a DNS label/,
      );
    });
  });

  describe("kind A8sServiceBinding", () => {
    const binding = (extra: Record<string, unknown> = {}) => ({
      apiVersion: INPUT_API_VERSION,
      kind: A8S_SERVICE_BINDING_KIND,
      providerConfigName: "kubernetes-provider",
      connectionSecretNamespace: "crossplane-system",
      ...extra,
    });

    it("takes providerConfigName and connectionSecretNamespace", () => {
      assert.deepEqual(parseInput(binding()), {
        kind: A8S_SERVICE_BINDING_KIND,
        providerConfigName: "kubernetes-provider",
        connectionSecretNamespace: "crossplane-system",
      });
    });

    it("refuses a missing ProviderConfig, a bad namespace and the local backend's fields", () => {
      refuses(
        binding({ providerConfigName: "" }),
        /input\.providerConfigName is ""; it must be a non-empty string/,
      );
      refuses(
        binding({ connectionSecretNamespace: "Crossplane_System" }),
        /input\.connectionSecretNamespace is "Crossplane_System"; it must be a DNS label/,
      );
      // a8s runs the server: there is no image to give.
      refuses(binding({ image: "klutch.local/postgres:15" }), /input: unsupported field "image"/);
    });
  });

  describe("kind NetworkConnection", () => {
    const connection = (extra: Record<string, unknown> = {}) => ({
      apiVersion: INPUT_API_VERSION,
      kind: NETWORK_CONNECTION_KIND,
      credentialsFrom: "credentials",
      hostKey: "instance_service",
      ...extra,
    });

    it("takes credentialsFrom and hostKey, with portKey, defaultPort and implementation when given", () => {
      assert.deepEqual(parseInput(connection({ defaultPort: 5432 })), {
        kind: NETWORK_CONNECTION_KIND,
        credentialsFrom: "credentials",
        hostKey: "instance_service",
        defaultPort: 5432,
      });
      assert.deepEqual(
        parseInput(connection({ hostKey: "host", portKey: "port", implementation: "proxy" })),
        {
          kind: NETWORK_CONNECTION_KIND,
          credentialsFrom: "credentials",
          hostKey: "host",
          portKey: "port",
          implementation: "proxy",
        },
      );
    });

    it("needs a port from somewhere: portKey or defaultPort", () => {
      refuses(connection(), /input has neither portKey nor defaultPort; set portKey .* or defaultPort/);
    });

    it("refuses malformed fields, naming them", () => {
      refuses(connection({ credentialsFrom: "", defaultPort: 1 }), /input\.credentialsFrom is ""/);
      refuses(connection({ hostKey: undefined, defaultPort: 1 }), /input\.hostKey is nothing/);
      refuses(connection({ portKey: 5432 }), /input\.portKey is 5432; it must be a non-empty string/);
      refuses(
        connection({ defaultPort: "5432" }),
        /input\.defaultPort is "5432"; it must be a port number from 1 to 65535/,
      );
      refuses(connection({ defaultPort: 70000 }), /input\.defaultPort is 70000/);
      refuses(
        connection({ defaultPort: 1, implementation: "Proxy" }),
        /input\.implementation is "Proxy"; it must be a DNS label/,
      );
      refuses(connection({ defaultPort: 1, image: "x" }), /input: unsupported field "image"/);
    });
  });
});

describe("composition function input: the a9s binding and its connections", () => {
  const head = { apiVersion: "fn.klutch.anynines.com/v1alpha1" };
  it("A9sServiceBinding takes nothing to choose, and refuses any field", () => {
    assert.deepEqual(parseInput({ ...head, kind: "A9sServiceBinding" }), { kind: "A9sServiceBinding" });
    assert.throws(
      () => parseInput({ ...head, kind: "A9sServiceBinding", providerConfigName: "x" }),
      /input: unsupported field "providerConfigName"; function-klutch supports only apiVersion, kind, metadata here/,
    );
  });

  it("NetworkConnections needs credentialsFrom and takes an implementation as a DNS label", () => {
    assert.deepEqual(
      parseInput({
        ...head,
        kind: "NetworkConnections",
        credentialsFrom: "a9s-servicebinding",
        implementation: "proxy",
      }),
      { kind: "NetworkConnections", credentialsFrom: "a9s-servicebinding", implementation: "proxy" },
    );
    assert.throws(
      () => parseInput({ ...head, kind: "NetworkConnections" }),
      /input\.credentialsFrom is nothing; it must be a non-empty string/,
    );
    assert.throws(
      () =>
        parseInput({ ...head, kind: "NetworkConnections", credentialsFrom: "b", implementation: "Proxy!" }),
      /input\.implementation is "Proxy!"/,
    );
  });

  it("NetworkConnections takes instanceZones as DNS names, lower case without the root's dot", () => {
    const input = { ...head, kind: "NetworkConnections", credentialsFrom: "b" };
    assert.deepEqual(parseInput({ ...input, instanceZones: ["Service.DC1.consul."] }), {
      kind: "NetworkConnections",
      credentialsFrom: "b",
      instanceZones: ["service.dc1.consul"],
    });
    assert.throws(
      () => parseInput({ ...input, instanceZones: ["a..b"] }),
      /input\.instanceZones\[0\] is "a\.\.b"; it must be a DNS name/,
    );
    assert.throws(
      () => parseInput({ ...input, instanceZones: "a.b" }),
      /input\.instanceZones is "a\.b"; it must be a list/,
    );
  });
});
