import { strict as assert } from "node:assert";
import type { LocalPostgresqlBackupInput } from "./input.js";
import { BACKUP_RESOURCES, composeLocalPostgresqlBackup } from "./local-backup.js";
import { STORE_SCRIPT } from "./local-backup-pods.js";
import { INSTANCE_REQUIREMENT } from "./local-instance.js";
import { CompositeError, type ObservedResource } from "./step.js";
import {
  READY_INSTANCE,
  claimComposite,
  claimLabels,
  fixedPassword,
  json,
  observedObject,
  type Json,
} from "./test-helpers.js";

const INPUT: LocalPostgresqlBackupInput = {
  kind: "LocalPostgresqlBackup",
  image: "klutch.local/postgres:15",
  imagePullPolicy: "Never",
  providerConfigName: "local",
};
const UID = "0b6f3c1e-2a4d-4e8f-9c1b-7d2e5f3a9b10";
const POD_UID = "pod-uid-1";
const password = fixedPassword("store-password-0123456789abcdef");

const xr = (spec: Json = { instanceRef: "pg", serviceInstanceType: "postgresql" }, managed?: Json) =>
  claimComposite("XBackup", "nightly", UID, spec, managed);
const INSTANCE = READY_INSTANCE;
const SELECTOR = {
  apiVersion: "anynines.com/v1",
  kind: "XPostgresqlInstance",
  matchLabels: claimLabels("pg"),
};
const RECORDED = {
  backupID: UID,
  podUsedNamespacedName: "team-a/nightly-backup",
  podUsedUID: POD_UID,
  store: { host: "nightly-backup", secret: "nightly-backup-store" },
  instance: { host: "pg-pg.team-a.svc.cluster.local", adminSecret: "pg-pg-admin" },
};

/** The observed store pod: Ready or not, its uid, and its container's status. */
const store = (
  ready: boolean,
  uid = POD_UID,
  containerStatus: Json = { restartCount: 0 },
): ObservedResource =>
  observedObject({
    spec: {},
    ready,
    atProvider: { manifest: { metadata: { uid }, status: { containerStatuses: [containerStatus] } } },
  });
const manifest = (c: { resource: unknown }) => json(c.resource).spec.forProvider.manifest;

describe("composition function: local PostgreSQL backup", () => {
  it("asks for the instance first, composing nothing", () => {
    assert.deepEqual(composeLocalPostgresqlBackup(xr(), {}, undefined, INPUT, password), {
      composed: [],
      requirements: { [INSTANCE_REQUIREMENT]: SELECTOR },
      conditions: [],
      results: [],
    });
  });

  it("another serviceInstanceType, or no instance: not ready, the reason on the claim, nothing composed", () => {
    const mongo = composeLocalPostgresqlBackup(
      xr({ instanceRef: "pg", serviceInstanceType: "mongodb" }),
      {},
      [INSTANCE],
      INPUT,
      password,
    );
    assert.deepEqual(
      [mongo.composed, mongo.compositeReady, mongo.conditions[0]?.reason],
      [[], false, "UnsupportedServiceType"],
    );
    assert.match(mongo.conditions[0]!.message!, /"mongodb": this backend backs up postgresql only/);
    const none = composeLocalPostgresqlBackup(xr(), {}, [], INPUT, password);
    const message = 'PostgresqlInstance "pg" not found in namespace "team-a"';
    assert.deepEqual(none.conditions, [
      { type: "BackupComplete", status: "False", reason: "InstanceNotFound", message },
    ]);
    assert.deepEqual(
      [none.composed, none.compositeReady, none.results],
      [[], false, [{ severity: "Warning", message }]],
    );
    assert.throws(
      () => composeLocalPostgresqlBackup(xr({ serviceInstanceType: "postgresql" }), {}, [], INPUT, password),
      CompositeError,
    );
  });

  it("composes the store: its Secret, a pod that dumps the instance with the passwords from Secrets only, and its Service", () => {
    const out = composeLocalPostgresqlBackup(xr(), {}, [INSTANCE], INPUT, password);
    assert.deepEqual(
      out.composed.map((c) => [c.name, c.ready]),
      [
        ["store-credentials", false],
        ["store", false],
        ["service", false],
      ],
    );
    const [secret, pod, service] = out.composed.map(manifest);
    assert.deepEqual(secret.metadata, { name: "nightly-backup-store", namespace: "team-a" });
    assert.equal(secret.stringData.password, "store-password-0123456789abcdef");
    assert.equal(pod.metadata.name, "nightly-backup");
    assert.deepEqual(pod.metadata.labels, { "klutch.anynines.com/backup": "nightly" });
    const container = pod.spec.containers[0];
    assert.deepEqual(container.command, ["/bin/sh", "-c", STORE_SCRIPT]);
    assert.deepEqual(container.env, [
      {
        name: "POSTGRES_PASSWORD",
        valueFrom: { secretKeyRef: { name: "nightly-backup-store", key: "password" } },
      },
      { name: "INSTANCE_HOST", value: "pg-pg.team-a.svc.cluster.local" },
      { name: "INSTANCE_PASSWORD", valueFrom: { secretKeyRef: { name: "pg-pg-admin", key: "password" } } },
    ]);
    assert.ok(!JSON.stringify(pod).includes("store-password"), "no password in the pod");
    assert.equal(container.securityContext.runAsNonRoot, true);
    assert.equal(container.terminationMessagePolicy, "FallbackToLogsOnError");
    assert.deepEqual(service.spec.selector, { "klutch.anynines.com/backup": "nightly" });
    assert.equal(json(out.composed[1]!.resource).spec.readiness.policy, "DeriveFromCelQuery");
    assert.deepEqual(
      out.conditions.map((c) => [c.status, c.reason]),
      [["False", "BackupRunning"]],
    );
    assert.equal(
      json(out.compositePatch).status.managed.podUsedUID,
      undefined,
      "nothing recorded before the dump is in",
    );
  });

  it("records the pod that took the dump once its store is Ready, with a8s's field names", () => {
    const observed = { [BACKUP_RESOURCES.store]: store(true) };
    const out = composeLocalPostgresqlBackup(xr(), observed, [INSTANCE], INPUT, password);
    assert.deepEqual(json(out.compositePatch).status.managed, RECORDED);
    assert.deepEqual(
      out.conditions.map((c) => [c.status, c.reason]),
      [["True", "BackupComplete"]],
    );
    assert.match(out.conditions[0]!.message!, /held by pod team-a\/nightly-backup, served at nightly-backup/);
  });

  it("once recorded, composes the store alike with the instance gone", () => {
    const observed = { [BACKUP_RESOURCES.store]: store(true) };
    const out = composeLocalPostgresqlBackup(xr(undefined, RECORDED), observed, [], INPUT, password);
    const before = composeLocalPostgresqlBackup(xr(), observed, [INSTANCE], INPUT, password);
    assert.deepEqual(out.composed, before.composed);
    assert.deepEqual(json(out.compositePatch).status.managed, RECORDED);
    assert.equal(out.conditions[0]!.status, "True");
  });

  it("a store pod of another uid holds a later dump: BackupLost, not ready, on the claim", () => {
    const observed = { [BACKUP_RESOURCES.store]: store(true, "pod-uid-2") };
    const out = composeLocalPostgresqlBackup(xr(undefined, RECORDED), observed, [INSTANCE], INPUT, password);
    assert.equal(out.compositeReady, false);
    assert.deepEqual(
      out.conditions.map((c) => [c.status, c.reason]),
      [["False", "BackupLost"]],
    );
    assert.match(
      out.conditions[0]!.message!,
      /uid pod-uid-1\) is gone, and pod uid pod-uid-2 in its place holds a later dump/,
    );
    assert.equal(json(out.compositePatch).status.managed.podUsedUID, POD_UID, "the record stays");
    assert.equal(out.results.length, 1);
  });

  it("a failing dump is named on the claim with its last words", () => {
    const failing = store(false, POD_UID, {
      restartCount: 2,
      state: { waiting: { reason: "CrashLoopBackOff" } },
      lastState: {
        terminated: {
          exitCode: 1,
          message:
            'pg_dump: error: connection to server failed\nFATAL: password authentication failed for user "postgres"\n',
        },
      },
    });
    const out = composeLocalPostgresqlBackup(
      xr(),
      { [BACKUP_RESOURCES.store]: failing },
      [INSTANCE],
      INPUT,
      password,
    );
    assert.equal(out.conditions[0]!.reason, "BackupRunning");
    assert.match(
      out.conditions[0]!.message!,
      /pod team-a\/nightly-backup is taking the dump: failed 2 times; CrashLoopBackOff; last said: pg_dump: error: connection to server failed \/ FATAL: password authentication failed/,
    );
    assert.deepEqual(out.results, [{ severity: "Warning", message: out.conditions[0]!.message }]);
  });

  it("keeps the store's password from call to call, and refuses a claim name too long for its Service", () => {
    const first = composeLocalPostgresqlBackup(xr(), {}, [INSTANCE], INPUT, password);
    const observed = {
      [BACKUP_RESOURCES.storeCredentials]: {
        resource: json(first.composed[0]!.resource),
        connectionDetails: {},
      },
    };
    const again = composeLocalPostgresqlBackup(xr(), observed, [INSTANCE], INPUT, fixedPassword("other"));
    assert.equal(manifest(again.composed[0]!).stringData.password, "store-password-0123456789abcdef");
    const long = { ...xr(), metadata: { name: "x", uid: UID, labels: claimLabels("n".repeat(60)) } };
    assert.throws(
      () => composeLocalPostgresqlBackup(long, {}, [INSTANCE], INPUT, password),
      /at most 56 lower-case letters/,
    );
  });
});
