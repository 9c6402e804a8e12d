import { strict as assert } from "node:assert";
import type { LocalPostgresqlInstanceInput } from "./input.js";
import {
  INSTANCE_RESOURCES,
  POSTGRESQL_POD_LABEL,
  composeLocalPostgresqlInstance,
  managedInstance,
} from "./local-postgresql.js";
import { REVOKE_SCRIPT, roleName } from "./binding-roles.js";
import { CompositeError, type ObservedResource } from "./step.js";
import { claimLabels, fixedPassword as password, json, observedObject, type Json } from "./test-helpers.js";

const INPUT: LocalPostgresqlInstanceInput = {
  kind: "LocalPostgresqlInstance",
  image: "klutch.local/postgres:15",
  imagePullPolicy: "Never",
  providerConfigName: "local",
  clusterDomain: "cluster.local",
};

const xr = (labels: Record<string, string> = claimLabels("pg")) => ({
  apiVersion: "anynines.com/v1",
  kind: "XPostgresqlInstance",
  metadata: { name: "pg-x7k2p", uid: "u-1", labels },
  spec: { service: "a9s-postgresql13", plan: "postgresql-single-nano" },
});

const observedAs = (manifest: Json, ready: boolean): ObservedResource =>
  observedObject({ name: "pg-x7k2p-abcde", spec: { forProvider: { manifest } }, ready });

const fixedPassword = password("generated-password-0123456789abc");
const noPassword = () => assert.fail("no password may be generated once the Secret has one");

describe("composition function: local PostgreSQL instance", () => {
  it("composes the admin Secret, the server Deployment and the Service as provider-kubernetes Objects, none ready yet", () => {
    const out = composeLocalPostgresqlInstance(xr(), {}, [], INPUT, fixedPassword);
    assert.deepEqual(
      out.composed.map((c) => [c.name, c.ready]),
      [
        ["admin-credentials", false],
        ["server", false],
        ["service", false],
      ],
    );
    for (const c of out.composed) {
      assert.equal(c.resource.apiVersion, "kubernetes.crossplane.io/v1alpha2");
      assert.equal(c.resource.kind, "Object");
      assert.deepEqual((c.resource.spec as Json).providerConfigRef, { name: "local" });
      // Cluster-scoped: Crossplane names it after the composite.
      assert.equal(c.resource.metadata, undefined);
    }
    const [admin, server, service] = out.composed.map((c) => c.resource.spec as Json);
    assert.deepEqual(admin!.forProvider.manifest, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "pg-pg-admin", namespace: "team-a" },
      type: "Opaque",
      stringData: {
        username: "postgres",
        password: "generated-password-0123456789abc",
        database: "postgres",
      },
    });
    assert.deepEqual(admin!.readiness, { policy: "SuccessfulCreate" });
    assert.deepEqual(service!.readiness, { policy: "SuccessfulCreate" });
    // Only what waits on the object's status is watched.
    assert.deepEqual([admin!.watch, service!.watch, server!.watch], [undefined, undefined, true]);
    assert.deepEqual(server!.readiness, {
      policy: "DeriveFromCelQuery",
      celQuery: "has(object.status.readyReplicas) && object.status.readyReplicas > 0",
    });

    const deployment = server!.forProvider.manifest;
    assert.deepEqual(deployment.metadata, {
      name: "pg-pg",
      namespace: "team-a",
      labels: { [POSTGRESQL_POD_LABEL]: "pg" },
    });
    assert.equal(deployment.spec.replicas, 1);
    assert.deepEqual(deployment.spec.strategy, { type: "Recreate" });
    assert.deepEqual(deployment.spec.selector, { matchLabels: { [POSTGRESQL_POD_LABEL]: "pg" } });
    assert.deepEqual(deployment.spec.template.metadata.labels, { [POSTGRESQL_POD_LABEL]: "pg" });
    const pod = deployment.spec.template.spec;
    assert.deepEqual(pod.volumes, [{ name: "data", emptyDir: {} }]);
    assert.equal(pod.containers.length, 1);
    const c = pod.containers[0];
    assert.equal(c.name, "postgres");
    assert.equal(c.image, "klutch.local/postgres:15");
    assert.equal(c.imagePullPolicy, "Never");
    assert.deepEqual(c.env, [
      { name: "POSTGRES_PASSWORD", valueFrom: { secretKeyRef: { name: "pg-pg-admin", key: "password" } } },
    ]);
    assert.deepEqual(c.ports, [{ name: "postgresql", containerPort: 5432, protocol: "TCP" }]);
    assert.deepEqual(c.readinessProbe.exec.command, ["pg_isready", "-h", "127.0.0.1", "-U", "postgres"]);
    assert.deepEqual(c.securityContext, {
      runAsNonRoot: true,
      runAsUser: 999,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
    });
    assert.deepEqual(c.volumeMounts, [{ name: "data", mountPath: "/var/lib/postgresql/data" }]);
    // No password in the Deployment itself.
    assert.doesNotMatch(JSON.stringify(deployment), /generated-password/);

    assert.deepEqual(service!.forProvider.manifest, {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "pg-pg", namespace: "team-a", labels: { [POSTGRESQL_POD_LABEL]: "pg" } },
      spec: {
        type: "ClusterIP",
        selector: { [POSTGRESQL_POD_LABEL]: "pg" },
        ports: [{ name: "postgresql", port: 5432, targetPort: 5432, protocol: "TCP" }],
      },
    });

    assert.deepEqual(out.compositePatch, {
      status: {
        managed: {
          host: "pg-pg.team-a.svc.cluster.local",
          port: 5432,
          adminSecret: "pg-pg-admin",
          bindingRoles: [],
        },
      },
    });
    // The bindings of the claim's namespace, whose roles the instance keeps track of.
    assert.deepEqual(out.requirements, {
      bindings: {
        apiVersion: "anynines.com/v1",
        kind: "XServiceBinding",
        matchLabels: { "crossplane.io/claim-namespace": "team-a" },
      },
    });
    assert.equal(out.compositeReady, undefined);
    assert.deepEqual([out.conditions, out.results, out.connectionDetails], [[], [], undefined]);
  });

  it("takes the image pull policy from the input", () => {
    const out = composeLocalPostgresqlInstance(
      xr(),
      {},
      [],
      { ...INPUT, imagePullPolicy: "IfNotPresent" },
      fixedPassword,
    );
    const server = json(out.composed.find((c) => c.name === INSTANCE_RESOURCES.server)!.resource);
    assert.equal(
      server.spec.forProvider.manifest.spec.template.spec.containers[0].imagePullPolicy,
      "IfNotPresent",
    );
  });

  it("keeps the password the observed Secret has, and counts each Object ready by its Ready condition", () => {
    const first = composeLocalPostgresqlInstance(xr(), {}, [], INPUT, fixedPassword);
    const observed = {
      "admin-credentials": observedAs((first.composed[0]!.resource.spec as Json).forProvider.manifest, true),
      server: observedAs({}, false),
      service: observedAs({}, true),
    };
    const again = composeLocalPostgresqlInstance(xr(), observed, [], INPUT, noPassword);
    assert.deepEqual(
      again.composed.map((c) => c.resource),
      first.composed.map((c) => c.resource),
    );
    assert.deepEqual(
      again.composed.map((c) => c.ready),
      [true, false, true],
    );
  });

  it("generates a new password while the observed Secret has none", () => {
    const out = composeLocalPostgresqlInstance(
      xr(),
      { "admin-credentials": observedAs({ stringData: {} }, false) },
      [],
      INPUT,
      () => "another",
    );
    assert.equal(
      (out.composed[0]!.resource.spec as Json).forProvider.manifest.stringData.password,
      "another",
    );
  });

  it("is fatal for a composite made without a claim, naming the label and the fix", () => {
    assert.throws(
      () =>
        composeLocalPostgresqlInstance(
          xr({ "crossplane.io/claim-name": "pg" }),
          {},
          [],
          INPUT,
          fixedPassword,
        ),
      (e: unknown) =>
        e instanceof CompositeError &&
        /^XPostgresqlInstance "pg-x7k2p" has no label crossplane\.io\/claim-namespace; LocalPostgresqlInstance composes only composite resources made from a claim.*create the claim/.test(
          e.message,
        ),
    );
  });

  it("is fatal for a claim name no Service can be named after", () => {
    assert.throws(
      () => managedInstance({ name: "1pg.db", namespace: "team-a" }),
      /PostgresqlInstance claim "1pg\.db" would get Service "1pg\.db-pg", which is not a DNS-1035 label/,
    );
    assert.throws(() => managedInstance({ name: "p".repeat(61), namespace: "n" }), CompositeError);
    assert.equal(
      managedInstance({ name: "p".repeat(60), namespace: "n" }).host,
      `${"p".repeat(60)}-pg.n.svc.cluster.local`,
    );
  });

  it("revokes the role of a binding it knew that is gone: a pod of the superuser's, then forgets the role once it succeeded", () => {
    const gone = roleName("binding-gone");
    const known = { ...xr(), status: { managed: { bindingRoles: [gone] } } };
    const out = composeLocalPostgresqlInstance(known, {}, [], INPUT, fixedPassword);
    const revoke = out.composed.filter((c) => c.name.startsWith("revoke-"));
    assert.equal(revoke.length, 1);
    // Not part of the instance's readiness: it stays Ready while a revocation runs.
    assert.equal(revoke[0]!.ready, true);
    const object = json(revoke[0]!.resource);
    assert.deepEqual(object.spec.readiness, {
      policy: "DeriveFromCelQuery",
      celQuery: "object.status.phase == 'Succeeded'",
    });
    assert.equal(object.spec.watch, true);
    const pod = object.spec.forProvider.manifest;
    assert.deepEqual([pod.apiVersion, pod.kind], ["v1", "Pod"]);
    assert.equal(pod.metadata.namespace, "team-a");
    assert.match(pod.metadata.name, /^pg-revoke-[0-9a-f]{10}$/);
    assert.deepEqual(pod.metadata.annotations, { "klutch.anynines.com/revoked-roles": gone });
    const [c] = pod.spec.containers;
    assert.deepEqual(c.command, ["/bin/sh", "-c", REVOKE_SCRIPT]);
    assert.deepEqual(c.env, [
      { name: "PGHOST", value: "pg-pg.team-a.svc.cluster.local" },
      { name: "PGUSER", value: "postgres" },
      { name: "PGDATABASE", value: "postgres" },
      { name: "PGPASSWORD", valueFrom: { secretKeyRef: { name: "pg-pg-admin", key: "password" } } },
      { name: "ROLES", value: gone },
    ]);
    // Until it succeeded the role stays in the ledger, so a failed run is not forgotten.
    assert.deepEqual(json(out.compositePatch).status.managed.bindingRoles, [gone]);

    const done = composeLocalPostgresqlInstance(
      known,
      { [revoke[0]!.name]: observedAs(pod, true) },
      [],
      INPUT,
      fixedPassword,
    );
    assert.deepEqual(
      done.composed.map((c) => c.name),
      ["admin-credentials", "server", "service"],
    );
    assert.deepEqual(json(done.compositePatch).status.managed.bindingRoles, []);
  });
});
