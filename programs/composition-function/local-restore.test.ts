import { strict as assert } from "node:assert";
import type { LocalPostgresqlRestoreInput } from "./input.js";
import { BACKUP_REQUIREMENT, RESTORE_RESOURCES, composeLocalPostgresqlRestore } from "./local-restore.js";
import { RESTORE_SCRIPT } from "./local-backup-pods.js";
import { INSTANCE_REQUIREMENT } from "./local-instance.js";
import { CompositeError } from "./step.js";
import {
  READY_INSTANCE,
  claimComposite,
  claimLabels,
  json,
  observedObject,
  type Json,
} from "./test-helpers.js";

const INPUT: LocalPostgresqlRestoreInput = {
  kind: "LocalPostgresqlRestore",
  image: "klutch.local/postgres:15",
  imagePullPolicy: "Never",
  providerConfigName: "local",
};
const UID = "9d3e1f2a-5b6c-4d7e-8f90-a1b2c3d4e5f6";
const SPEC = { backupRef: "nightly", instanceRef: "pg", serviceInstanceType: "postgresql" };

const xr = (spec: Json = SPEC, managed?: Json) => claimComposite("XRestore", "undo", UID, spec, managed);
const INSTANCE = READY_INSTANCE;
const backup = (ready: boolean, managed: Json = {}) => ({
  apiVersion: "anynines.com/v1",
  kind: "XBackup",
  metadata: { name: "nightly-x1", labels: claimLabels("nightly") },
  status: {
    managed: {
      podUsedUID: "pod-uid-1",
      store: { host: "nightly-backup", secret: "nightly-backup-store" },
      instance: { host: "pg-pg.team-a.svc.cluster.local", adminSecret: "pg-pg-admin" },
      ...managed,
    },
    conditions: [
      { type: "Ready", status: ready ? "True" : "False" },
      ...(ready
        ? []
        : [
            {
              type: "BackupComplete",
              status: "False",
              message: "pod team-a/nightly-backup is taking the dump",
            },
          ]),
    ],
  },
});
const run = (ready: boolean, containerStatus?: Json) =>
  observedObject({
    spec: {},
    ready,
    ...(containerStatus
      ? { atProvider: { manifest: { status: { containerStatuses: [containerStatus] } } } }
      : {}),
  });

describe("composition function: local PostgreSQL restore", () => {
  it("asks for the Backup and the instance of its namespace, composing nothing until both are delivered", () => {
    const out = composeLocalPostgresqlRestore(xr(), {}, undefined, undefined, INPUT);
    assert.deepEqual(out.requirements, {
      [BACKUP_REQUIREMENT]: {
        apiVersion: "anynines.com/v1",
        kind: "XBackup",
        matchLabels: claimLabels("nightly"),
      },
      [INSTANCE_REQUIREMENT]: {
        apiVersion: "anynines.com/v1",
        kind: "XPostgresqlInstance",
        matchLabels: claimLabels("pg"),
      },
    });
    assert.deepEqual([out.composed, out.conditions], [[], []]);
    assert.throws(
      () =>
        composeLocalPostgresqlRestore(
          xr({ backupRef: "nightly", serviceInstanceType: "postgresql" }),
          {},
          [],
          [],
          INPUT,
        ),
      CompositeError,
    );
  });

  it("waits, saying why on the claim: no Backup, a Backup not Ready yet (with its reason), no instance", () => {
    const reason = (backups: Json[], instances: Json[]) => {
      const out = composeLocalPostgresqlRestore(xr(), {}, backups, instances, INPUT);
      assert.deepEqual([out.composed, out.compositeReady], [[], false]);
      return [out.conditions[0]!.reason, out.conditions[0]!.message];
    };
    assert.deepEqual(reason([], [INSTANCE]), [
      "BackupNotFound",
      'Backup "nightly" not found in namespace "team-a"',
    ]);
    assert.deepEqual(reason([backup(false)], [INSTANCE]), [
      "BackupNotReady",
      'Backup "nightly" is not Ready (pod team-a/nightly-backup is taking the dump); the restore waits for it',
    ]);
    assert.equal(reason([backup(true)], [])[0], "InstanceNotFound");
  });

  it("composes one run of pg_restore from the Backup's store into the instance, the passwords from Secrets", () => {
    const out = composeLocalPostgresqlRestore(xr(), {}, [backup(true)], [INSTANCE], INPUT);
    assert.deepEqual(
      out.composed.map((c) => [c.name, c.ready]),
      [["restore", false]],
    );
    const object = json(out.composed[0]!.resource);
    assert.equal(object.spec.readiness.celQuery, "object.status.phase == 'Succeeded'");
    const pod = object.spec.forProvider.manifest;
    assert.deepEqual(pod.metadata, { name: "undo-restore", namespace: "team-a" });
    assert.equal(pod.spec.restartPolicy, "OnFailure");
    assert.deepEqual(pod.spec.containers[0].command, ["/bin/sh", "-c", RESTORE_SCRIPT]);
    assert.deepEqual(pod.spec.containers[0].env, [
      { name: "STORE_HOST", value: "nightly-backup" },
      {
        name: "STORE_PASSWORD",
        valueFrom: { secretKeyRef: { name: "nightly-backup-store", key: "password" } },
      },
      { name: "INSTANCE_HOST", value: "pg-pg.team-a.svc.cluster.local" },
      { name: "INSTANCE_PASSWORD", valueFrom: { secretKeyRef: { name: "pg-pg-admin", key: "password" } } },
    ]);
    assert.deepEqual(
      out.conditions.map((c) => [c.status, c.reason]),
      [["False", "RestoreRunning"]],
    );
  });

  it("a failing run is named on the claim with its last words", () => {
    const failing = run(false, {
      restartCount: 1,
      lastState: { terminated: { message: "pg_restore: error: could not execute query" } },
    });
    const out = composeLocalPostgresqlRestore(
      xr(),
      { [RESTORE_RESOURCES.run]: failing },
      [backup(true)],
      [INSTANCE],
      INPUT,
    );
    assert.match(
      out.conditions[0]!.message!,
      /is restoring Backup "nightly" into PostgresqlInstance "pg": failed 1 time; last said: pg_restore: error/,
    );
    assert.equal(out.results.length, 1);
  });

  it("runs once: its success is recorded with the run still composed, and from then on nothing is composed", () => {
    const succeeded = composeLocalPostgresqlRestore(
      xr(),
      { [RESTORE_RESOURCES.run]: run(true) },
      [backup(true)],
      [INSTANCE],
      INPUT,
    );
    assert.deepEqual(
      succeeded.composed.map((c) => [c.name, c.ready]),
      [["restore", true]],
    );
    assert.deepEqual(json(succeeded.compositePatch).status.managed, { restoreID: UID });
    assert.deepEqual(
      succeeded.conditions.map((c) => [c.status, c.reason]),
      [["True", "RestoreComplete"]],
    );
    // Later calls: recorded, so the pod goes and the Backup or instance no longer matter.
    const later = composeLocalPostgresqlRestore(
      xr(SPEC, { restoreID: UID }),
      { [RESTORE_RESOURCES.run]: run(true) },
      [],
      [],
      INPUT,
    );
    assert.deepEqual(later.composed, []);
    assert.equal(later.compositeReady, undefined);
    assert.deepEqual(json(later.compositePatch).status.managed, { restoreID: UID });
    assert.equal(later.conditions[0]!.status, "True");
  });
});
