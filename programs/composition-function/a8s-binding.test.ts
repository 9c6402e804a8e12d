import { strict as assert } from "node:assert";
import {
  A8S_BINDING_RESOURCE,
  BINDING_IMPLEMENTED,
  IMPLEMENTED_QUERY,
  composeA8sServiceBinding,
} from "./a8s-binding.js";
import type { A8sServiceBindingInput } from "./input.js";
import { BINDING_KEYS } from "./local-binding.js";
import { a8sBindingManifest } from "../../test/helpers/a8s-stand-in.js";
import { CompositeError, type ObservedResource } from "./step.js";
import { bindingComposite, json, observedObject, type Json } from "./test-helpers.js";

const INPUT: A8sServiceBindingInput = {
  kind: "A8sServiceBinding",
  providerConfigName: "kubernetes-provider",
  connectionSecretNamespace: "crossplane-system",
};
const UID = "5b0c6a1e-2f4d-4c55-9d0e-7a1b2c3d4e5f";

const xr = (spec: Json = { instanceRef: "orders-db", serviceInstanceType: "postgresql" }) =>
  bindingComposite("orders-app-x2k9q", "orders-app", UID, spec);

/** The Object as provider-kubernetes reports it: the a8s binding's status under atProvider.manifest. */
const observedBinding = (
  a8s: Json | undefined,
  opts: { ready?: boolean; details?: Record<string, Buffer>; spec?: Json } = {},
): Record<string, ObservedResource> => ({
  [A8S_BINDING_RESOURCE]: observedObject({
    spec: opts.spec ?? {},
    ready: opts.ready ?? false,
    ...(a8s ? { atProvider: { manifest: { kind: "ServiceBinding", status: a8s } } } : {}),
    ...(opts.details ? { connectionDetails: opts.details } : {}),
  }),
});

const CREDENTIALS = {
  username: Buffer.from("a9s7f2c1"),
  password: Buffer.from("s3cr3t-from-a8s"),
  database: Buffer.from("a9s_apps_default_db"),
  instance_service: Buffer.from("orders-db-master.team-a.svc.cluster.local"),
};

describe("composeA8sServiceBinding (a8s's binding, as Klutch's a8s-servicebinding composes it)", () => {
  it("wraps an a8s ServiceBinding as upstream's patches shape it, and waits for a8s", () => {
    const r = composeA8sServiceBinding(xr(), {}, INPUT);
    assert.equal(r.composed.length, 1);
    const [c] = r.composed;
    assert.equal(c!.name, A8S_BINDING_RESOURCE);
    assert.equal(c!.ready, false);
    const spec = json(c!.resource).spec;
    // klutchio crossplane-api/api/a8s/servicebinding/composition.yaml: metadata.name and namespace
    // from the claim's labels; spec.instance from serviceInstanceType (map postgresql), the
    // claim's namespace and spec.instanceRef; ProviderConfig kubernetes-provider.
    assert.deepEqual(spec.forProvider.manifest, a8sBindingManifest("orders-app", "team-a", "orders-db"));
    assert.deepEqual(spec.providerConfigRef, { name: "kubernetes-provider" });
    assert.deepEqual(spec.readiness, { policy: "DeriveFromCelQuery", celQuery: IMPLEMENTED_QUERY });
    assert.deepEqual(spec.writeConnectionSecretToRef, {
      namespace: "crossplane-system",
      name: `${UID}-credentials`,
    });
    // No reference to a Secret that does not exist yet: provider-kubernetes would fail every observe.
    assert.equal(spec.connectionDetails, undefined);
    assert.deepEqual(r.compositePatch, { status: { managed: { implemented: false } } });
    assert.equal(r.connectionDetails, undefined);
    assert.deepEqual(
      r.conditions.map((c) => [c.type, c.status, c.reason]),
      [[BINDING_IMPLEMENTED, "False", "WaitingForA8s"]],
    );
    assert.match(
      r.conditions[0]!.message!,
      /a8s ServiceBinding "team-a\/orders-app" for Postgresql "orders-db"/,
    );
  });

  it("names the Secret's keys once a8s reports the binding implemented and names its Secret", () => {
    const r = composeA8sServiceBinding(
      xr(),
      observedBinding({
        implemented: true,
        secret: { name: "orders-app-service-binding", namespace: "team-a" },
      }),
      INPUT,
    );
    const spec = json(r.composed[0]!.resource).spec;
    assert.deepEqual(
      spec.connectionDetails,
      BINDING_KEYS.map((key) => ({
        apiVersion: "v1",
        kind: "Secret",
        name: "orders-app-service-binding",
        namespace: "team-a",
        fieldPath: `data.${key}`,
        toConnectionSecretKey: key,
      })),
    );
    // Upstream's ToCompositeFieldPath patches: implemented, secret.name, secret.namespace.
    assert.deepEqual(r.compositePatch, {
      status: {
        managed: { implemented: true, secret: { name: "orders-app-service-binding", namespace: "team-a" } },
      },
    });
    assert.deepEqual(
      r.conditions.map((c) => [c.status, c.reason]),
      [["False", "ReadingCredentials"]],
    );
  });

  it("reads the Secret where a8s says it is, and from the binding's namespace when a8s names none", () => {
    const elsewhere = composeA8sServiceBinding(
      xr(),
      observedBinding({ implemented: true, secret: { name: "creds", namespace: "a8s-secrets" } }),
      INPUT,
    );
    assert.equal(json(elsewhere.composed[0]!.resource).spec.connectionDetails[0].namespace, "a8s-secrets");
    const unnamed = composeA8sServiceBinding(
      xr(),
      observedBinding({ implemented: true, secret: { name: "creds" } }),
      INPUT,
    );
    assert.equal(json(unnamed.composed[0]!.resource).spec.connectionDetails[0].namespace, "team-a");
    // The status copies what a8s reported, nothing filled in.
    assert.deepEqual(unnamed.compositePatch, {
      status: { managed: { implemented: true, secret: { name: "creds" } } },
    });
  });

  it("waits, naming no Secret, while a8s has implemented the binding without naming its Secret", () => {
    const r = composeA8sServiceBinding(xr(), observedBinding({ implemented: true }), INPUT);
    assert.equal(json(r.composed[0]!.resource).spec.connectionDetails, undefined);
    assert.deepEqual(
      r.conditions.map((c) => [c.status, c.reason]),
      [["False", "SecretNotNamed"]],
    );
  });

  it("publishes a8s's credentials as the binding's connection details, and is ready with the Object", () => {
    const spec = { forProvider: {}, connectionDetails: [] };
    const r = composeA8sServiceBinding(
      xr(),
      observedBinding(
        { implemented: true, secret: { name: "orders-app-service-binding", namespace: "team-a" } },
        { ready: true, details: CREDENTIALS, spec },
      ),
      INPUT,
    );
    assert.deepEqual(r.connectionDetails, CREDENTIALS);
    assert.equal(r.composed[0]!.ready, true);
    assert.equal(r.compositeReady, undefined, "an earlier or later step decides nothing here");
    assert.deepEqual(
      r.conditions.map((c) => [c.type, c.status, c.reason]),
      [[BINDING_IMPLEMENTED, "True", "Implemented"]],
    );
    assert.match(r.conditions[0]!.message!, /Secret "team-a\/orders-app-service-binding"/);
  });

  it("refuses a service type a8s does not serve, on the claim, composing nothing", () => {
    for (const type of ["mongodb", "constructor", "__proto__"]) {
      const r = composeA8sServiceBinding(xr({ instanceRef: "db", serviceInstanceType: type }), {}, INPUT);
      assert.deepEqual(r.composed, []);
      assert.equal(r.compositeReady, false);
      assert.equal(r.conditions[0]!.reason, "UnsupportedServiceType");
      assert.equal(
        r.results[0]!.message,
        `spec.serviceInstanceType is ${JSON.stringify(type)}; a8s binds postgresql only: set it to postgresql, or bind with a composition of the backend that serves ${JSON.stringify(type)}`,
      );
    }
  });

  it("fails the composite that has no instanceRef, or was not made from a claim", () => {
    assert.throws(
      () => composeA8sServiceBinding(xr({ serviceInstanceType: "postgresql" }), {}, INPUT),
      (e: unknown) =>
        e instanceof CompositeError &&
        /has no spec\.instanceRef; set it to the name of the PostgresqlInstance claim in namespace "team-a"/.test(
          e.message,
        ),
    );
    const unclaimed = { ...xr(), metadata: { name: "x", uid: UID } };
    assert.throws(
      () => composeA8sServiceBinding(unclaimed, {}, INPUT),
      (e: unknown) =>
        e instanceof CompositeError && /has no label crossplane\.io\/claim-name/.test(e.message),
    );
  });
});
