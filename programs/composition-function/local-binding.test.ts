import { strict as assert } from "node:assert";
import { createHash } from "node:crypto";
import type { LocalPostgresqlBindingInput } from "./input.js";
import { BINDING_KEYS, ROLE_SCRIPT, composeLocalPostgresqlBinding } from "./local-binding.js";
import { roleName } from "./binding-roles.js";
import { INSTANCE_REQUIREMENT } from "./local-instance.js";
import { CompositeError, type ObservedResource } from "./step.js";
import {
  bindingComposite,
  claimLabels,
  fixedPassword as password,
  instanceComposite,
  json,
  observedObject,
  type Json,
} from "./test-helpers.js";

const INPUT: LocalPostgresqlBindingInput = {
  kind: "LocalPostgresqlBinding",
  image: "klutch.local/postgres:15",
  imagePullPolicy: "Never",
  providerConfigName: "local",
  connectionSecretNamespace: "crossplane-system",
};
const UID = "3f1c2b9e-8d8a-4d0e-9a43-0c6f1c9a7b55";

const xr = (spec: Json = { instanceRef: "pg", serviceInstanceType: "postgresql" }) =>
  bindingComposite("app-db-9fk2d", "app-db", UID, spec);

const instance = instanceComposite;
const READY_INSTANCE = instance({ host: "pg-pg.team-a.svc", port: 5432, adminSecret: "pg-pg-admin" });

const SELECTOR = {
  apiVersion: "anynines.com/v1",
  kind: "XPostgresqlInstance",
  matchLabels: claimLabels("pg"),
};

const observedAs = (
  spec: Json,
  ready: boolean,
  connectionDetails: Record<string, Buffer> = {},
): ObservedResource => observedObject({ name: "app-db-9fk2d-x1", spec, ready, connectionDetails });

const fixedPassword = password("binding-password-0123456789abcdef");

describe("composition function: local PostgreSQL binding", () => {
  it("names the role after the composite's uid: klutch_ and 12 hex characters of its sha256", () => {
    const expected = `klutch_${createHash("sha256").update(UID).digest("hex").slice(0, 12)}`;
    assert.equal(roleName(UID), expected);
    assert.match(roleName(UID), /^klutch_[0-9a-f]{12}$/);
    assert.notEqual(roleName("other"), expected);
  });

  it("asks for the instance and composes nothing while Crossplane has not delivered it", () => {
    const out = composeLocalPostgresqlBinding(xr(), {}, undefined, INPUT, fixedPassword);
    assert.deepEqual(out, {
      composed: [],
      requirements: { [INSTANCE_REQUIREMENT]: SELECTOR },
      conditions: [],
      results: [],
    });
  });

  it("a serviceInstanceType other than postgresql: refused on the claim (UnsupportedServiceType), nothing asked for or composed", () => {
    const out = composeLocalPostgresqlBinding(
      xr({ instanceRef: "pg", serviceInstanceType: "mongodb" }),
      {},
      [READY_INSTANCE],
      INPUT,
      fixedPassword,
    );
    assert.deepEqual(out.composed, []);
    assert.equal(out.compositeReady, false);
    assert.equal(out.requirements, undefined, "no instance is fetched for a binding it refuses");
    assert.deepEqual(
      out.conditions.map((c) => [c.type, c.status, c.reason]),
      [["InstanceFound", "False", "UnsupportedServiceType"]],
    );
    assert.match(
      out.conditions[0]?.message ?? "",
      /serviceInstanceType is "mongodb".*binds postgresql only; set serviceInstanceType: postgresql/,
    );
  });

  it("no instance found: nothing composed, not ready, a warning and an InstanceFound False condition", () => {
    const out = composeLocalPostgresqlBinding(xr(), {}, [], INPUT, fixedPassword);
    const message = 'PostgresqlInstance "pg" not found in namespace "team-a"';
    assert.deepEqual(out, {
      composed: [],
      compositeReady: false,
      requirements: { instance: SELECTOR },
      conditions: [{ type: "InstanceFound", status: "False", reason: "InstanceNotFound", message }],
      results: [{ severity: "Warning", message }],
    });
  });

  it("an instance without status.managed.host: InstanceNotReady, nothing composed", () => {
    const out = composeLocalPostgresqlBinding(xr(), {}, [instance()], INPUT, fixedPassword);
    assert.deepEqual(out.composed, []);
    assert.equal(out.compositeReady, false);
    assert.equal(out.conditions[0]!.reason, "InstanceNotReady");
    assert.match(
      out.conditions[0]!.message!,
      /PostgresqlInstance "pg" in namespace "team-a" has no status\.managed\.host yet/,
    );
    assert.deepEqual(out.results, [{ severity: "Warning", message: out.conditions[0]!.message }]);
    const noSecret = composeLocalPostgresqlBinding(xr(), {}, [instance({ host: "h" })], INPUT, fixedPassword);
    assert.match(noSecret.conditions[0]!.message!, /no status\.managed\.adminSecret yet/);
  });

  it("two instances for one claim: refuses to pick one", () => {
    const out = composeLocalPostgresqlBinding(
      xr(),
      {},
      [READY_INSTANCE, READY_INSTANCE],
      INPUT,
      fixedPassword,
    );
    assert.deepEqual(out.composed, []);
    assert.equal(out.conditions[0]!.reason, "InstanceAmbiguous");
  });

  it("composes the a8s-shaped credentials Secret and the role pod for a found instance", () => {
    const out = composeLocalPostgresqlBinding(xr(), {}, [READY_INSTANCE], INPUT, fixedPassword);
    assert.deepEqual(
      out.composed.map((c) => [c.name, c.ready]),
      [
        ["credentials", false],
        ["role", false],
      ],
    );
    const [credentials, role] = out.composed.map((c) => json(c.resource));
    assert.deepEqual(credentials, {
      apiVersion: "kubernetes.crossplane.io/v1alpha2",
      kind: "Object",
      spec: {
        forProvider: {
          manifest: {
            apiVersion: "v1",
            kind: "Secret",
            metadata: { name: "app-db-service-binding", namespace: "team-a" },
            type: "Opaque",
            stringData: {
              username: roleName(UID),
              password: "binding-password-0123456789abcdef",
              database: "postgres",
              instance_service: "pg-pg.team-a.svc",
            },
          },
        },
        providerConfigRef: { name: "local" },
        readiness: { policy: "SuccessfulCreate" },
        connectionDetails: BINDING_KEYS.map((key) => ({
          apiVersion: "v1",
          kind: "Secret",
          name: "app-db-service-binding",
          namespace: "team-a",
          fieldPath: `data.${key}`,
          toConnectionSecretKey: key,
        })),
        writeConnectionSecretToRef: { namespace: "crossplane-system", name: `${UID}-credentials` },
      },
    });

    assert.deepEqual(role!.spec.readiness, {
      policy: "DeriveFromCelQuery",
      celQuery: "object.status.phase == 'Succeeded'",
    });
    assert.equal(role!.spec.watch, true, "the pod's success is seen when it happens, not at the 30 s poll");
    assert.deepEqual(role!.spec.providerConfigRef, { name: "local" });
    // A bare Pod, which goes with its Object: a Job's pods would be orphaned (adminScriptPod).
    const manifest = role!.spec.forProvider.manifest;
    assert.deepEqual([manifest.apiVersion, manifest.kind], ["v1", "Pod"]);
    assert.deepEqual(manifest.metadata, { name: "app-db-role", namespace: "team-a" });
    const pod = manifest.spec;
    assert.equal(pod.restartPolicy, "OnFailure");
    assert.equal(pod.automountServiceAccountToken, false);
    const [c] = pod.containers;
    assert.equal(c.image, "klutch.local/postgres:15");
    assert.equal(c.imagePullPolicy, "Never");
    assert.deepEqual(c.command, ["/bin/sh", "-c", ROLE_SCRIPT]);
    assert.deepEqual(c.env, [
      { name: "PGHOST", value: "pg-pg.team-a.svc" },
      { name: "PGUSER", value: "postgres" },
      { name: "PGDATABASE", value: "postgres" },
      { name: "PGPASSWORD", valueFrom: { secretKeyRef: { name: "pg-pg-admin", key: "password" } } },
      { name: "ROLE_NAME", valueFrom: { secretKeyRef: { name: "app-db-service-binding", key: "username" } } },
      {
        name: "ROLE_PASSWORD",
        valueFrom: { secretKeyRef: { name: "app-db-service-binding", key: "password" } },
      },
    ]);
    assert.deepEqual(c.securityContext, {
      runAsNonRoot: true,
      runAsUser: 999,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
    });
    // No password anywhere in the pod: only Secret references.
    assert.doesNotMatch(JSON.stringify(manifest), /binding-password/);

    assert.deepEqual(out.compositePatch, {
      status: {
        managed: { secret: { name: "app-db-service-binding", namespace: "team-a" }, implemented: false },
      },
    });
    assert.equal(out.connectionDetails, undefined);
    assert.equal(out.compositeReady, undefined);
    assert.deepEqual(out.requirements, { instance: SELECTOR });
    assert.deepEqual(out.conditions, [
      {
        type: "InstanceFound",
        status: "True",
        reason: "InstanceFound",
        message: 'PostgresqlInstance "pg" in namespace "team-a" serves at pg-pg.team-a.svc',
      },
    ]);
    assert.deepEqual(out.results, []);
  });

  it("the role script feeds psql a script on stdin: \\gexec for the CREATE, the password as a quoted variable", () => {
    assert.match(ROLE_SCRIPT, /^set -eu\n/);
    assert.match(
      ROLE_SCRIPT,
      /psql --no-psqlrc -v ON_ERROR_STOP=1 -v role="\$ROLE_NAME" -v pw="\$ROLE_PASSWORD" <<'SQL'\n/,
    );
    assert.match(
      ROLE_SCRIPT,
      /SELECT format\('CREATE ROLE %I', :'role'\)\n {2}WHERE NOT EXISTS \(SELECT FROM pg_catalog\.pg_roles WHERE rolname = :'role'\)\n\\gexec\n/,
    );
    assert.match(ROLE_SCRIPT, /\nALTER ROLE :"role" WITH LOGIN PASSWORD :'pw';\n/);
    assert.doesNotMatch(ROLE_SCRIPT, / -c /);
    assert.match(ROLE_SCRIPT, /\nSQL\n$/);
  });

  it("keeps the observed password, and publishes the credentials Object's connection details once both are ready", () => {
    const first = composeLocalPostgresqlBinding(xr(), {}, [READY_INSTANCE], INPUT, fixedPassword);
    const details = {
      username: Buffer.from(roleName(UID)),
      password: Buffer.from("binding-password-0123456789abcdef"),
      database: Buffer.from("postgres"),
      instance_service: Buffer.from("pg-pg.team-a.svc"),
    };
    const observed = {
      credentials: observedAs(json(first.composed[0]!.resource).spec, true, details),
      role: observedAs({}, true),
    };
    const out = composeLocalPostgresqlBinding(xr(), observed, [READY_INSTANCE], INPUT, () =>
      assert.fail("the password is read back, not generated again"),
    );
    assert.deepEqual(
      out.composed.map((c) => c.resource),
      first.composed.map((c) => c.resource),
    );
    assert.deepEqual(
      out.composed.map((c) => c.ready),
      [true, true],
    );
    assert.deepEqual(out.connectionDetails, details);
    assert.equal((out.compositePatch as Json).status.managed.implemented, true);

    const roleRunning = composeLocalPostgresqlBinding(
      xr(),
      { ...observed, role: observedAs({}, false) },
      [READY_INSTANCE],
      INPUT,
      fixedPassword,
    );
    assert.equal((roleRunning.compositePatch as Json).status.managed.implemented, false);
  });

  it("is fatal without spec.instanceRef, or without the claim's labels", () => {
    assert.throws(
      () => composeLocalPostgresqlBinding(xr({}), {}, undefined, INPUT, fixedPassword),
      (e: unknown) =>
        e instanceof CompositeError &&
        /XServiceBinding "app-db-9fk2d" has no spec\.instanceRef; set it to the name of the PostgresqlInstance claim in namespace "team-a"/.test(
          e.message,
        ),
    );
    const unclaimed = { ...xr(), metadata: { name: "x", uid: UID } };
    assert.throws(
      () => composeLocalPostgresqlBinding(unclaimed, {}, undefined, INPUT, fixedPassword),
      /has no label crossplane\.io\/claim-name; LocalPostgresqlBinding composes only/,
    );
  });
});
