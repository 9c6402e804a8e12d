import { strict as assert } from "node:assert";
import {
  generatePassword,
  kubernetesObject,
  observedStringData,
  secretConnectionDetails,
} from "./kubernetes-object.js";

describe("composition function: provider-kubernetes Objects", () => {
  it("wraps a manifest with its ProviderConfig and readiness, connection details only when asked", () => {
    const manifest = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", namespace: "n" } };
    assert.deepEqual(
      kubernetesObject({ manifest, providerConfigName: "local", readiness: { policy: "SuccessfulCreate" } }),
      {
        apiVersion: "kubernetes.crossplane.io/v1alpha2",
        kind: "Object",
        spec: {
          forProvider: { manifest },
          providerConfigRef: { name: "local" },
          readiness: { policy: "SuccessfulCreate" },
        },
      },
    );
    const secret = { name: "s", namespace: "n" };
    const o = kubernetesObject({
      manifest,
      providerConfigName: "local",
      readiness: { policy: "DeriveFromCelQuery", celQuery: "true" },
      connectionDetails: secretConnectionDetails(secret, ["a"]),
      writeConnectionSecretToRef: { name: "w", namespace: "crossplane-system" },
    });
    assert.deepEqual((o.spec as Record<string, unknown>).connectionDetails, [
      {
        apiVersion: "v1",
        kind: "Secret",
        name: "s",
        namespace: "n",
        fieldPath: "data.a",
        toConnectionSecretKey: "a",
      },
    ]);
    assert.deepEqual((o.spec as Record<string, unknown>).writeConnectionSecretToRef, {
      name: "w",
      namespace: "crossplane-system",
    });
  });

  it("reads a Secret manifest's stringData back from the observed Object", () => {
    const observed = { spec: { forProvider: { manifest: { stringData: { password: "p" } } } } };
    assert.equal(observedStringData(observed, "password"), "p");
    assert.equal(observedStringData(observed, "username"), undefined);
    assert.equal(observedStringData(undefined, "password"), undefined);
  });

  it("generates 32 URL-safe characters, different each time", () => {
    const a = generatePassword();
    assert.match(a, /^[A-Za-z0-9_-]{32}$/);
    assert.notEqual(generatePassword(), a);
  });
});
