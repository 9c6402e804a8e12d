/**
 * A Backup of a local PostgreSQL instance (an XBackup, anynines.com/v1, whose spec.instanceRef
 * names a PostgresqlInstance claim of the same namespace): a store pod that takes the instance's
 * dump once and keeps it, behind a Service a Restore reads it through (local-backup-pods.ts).
 *
 * status.managed takes a8s-backup's field names where they mean the same (backupID,
 * podUsedNamespacedName, podUsedUID: upstream's crossplane-api/api/a8s/backup/composition.yaml)
 * and adds where the store serves, which the Restore reads. The uid of the pod that took the dump
 * is recorded once; a store pod of another uid took a later dump, so the Backup is then not Ready,
 * saying so, rather than passing a later state off as the one it was taken at.
 *
 * Pure, but for the password: `newPassword` is asked only while no observed Secret has one.
 */
import type { LocalPostgresqlBackupInput } from "./input.js";
import { isJsonObject, type JsonObject } from "./json.js";
import { localObject, observedStringData } from "./kubernetes-object.js";
import { POD_READY, storePod, storeService } from "./local-backup-pods.js";
import { INSTANCE_REQUIREMENT, instanceSelector, localInstance } from "./local-instance.js";
import { observedPod, podTrouble, resourceName, serviceTypeRefusal } from "./local-runs.js";
import {
  CompositeError,
  claimOf,
  describe,
  isReadyTrue,
  notReadyResult,
  stringAt,
  uidOf,
  type ObservedResource,
  type StepResult,
} from "./step.js";

export const BACKUP_RESOURCES = {
  storeCredentials: "store-credentials",
  store: "store",
  service: "service",
} as const;
export const BACKUP_COMPLETE = "BackupComplete";
const STEP = "LocalPostgresqlBackup";

/** What a Backup records in status.managed, and a Restore reads. */
export interface ManagedBackup {
  backupID?: string;
  podUsedNamespacedName?: string;
  podUsedUID?: string;
  /** The store's Service (a name of the claim's namespace) and the Secret with its password. */
  store: { host: string; secret: string };
  /** The instance the dump was taken of, kept so the store is composed alike after it is gone. */
  instance: { host: string; adminSecret: string };
}

export function composeLocalPostgresqlBackup(
  composite: JsonObject,
  observed: Readonly<Record<string, ObservedResource>>,
  /** The extra resources delivered under INSTANCE_REQUIREMENT; undefined: not delivered yet. */
  instances: readonly JsonObject[] | undefined,
  input: LocalPostgresqlBackupInput,
  newPassword: () => string,
): StepResult {
  const claim = claimOf(composite, STEP);
  const refusal = serviceTypeRefusal(composite, BACKUP_COMPLETE, "backs up");
  if (refusal) return refusal;
  const instanceRef = stringAt(composite, "spec", "instanceRef");
  if (!instanceRef)
    throw new CompositeError(
      `${describe(composite)} has no spec.instanceRef; set it to the name of the PostgresqlInstance claim in namespace ${JSON.stringify(claim.namespace)} to back up`,
    );
  const requirements = { [INSTANCE_REQUIREMENT]: instanceSelector(claim, instanceRef) };
  const previous = stringAt(composite, "status", "managed", "podUsedUID") ? recorded(composite) : undefined;
  if (instances === undefined && !previous)
    return { composed: [], requirements, conditions: [], results: [] };

  // Once the dump is taken the store is composed from what was recorded: the instance may be gone.
  let instance = previous?.instance;
  if (!instance) {
    const resolved = localInstance(
      instances ?? [],
      claim,
      instanceRef,
      "the backup waits until its server is composed",
    );
    if (!("found" in resolved))
      return notReadyResult(BACKUP_COMPLETE, resolved.reason, resolved.message, requirements);
    instance = resolved.found;
  }

  const R = BACKUP_RESOURCES;
  const name = resourceName(claim, "backup", "Backup");
  const storeSecret = `${name}-store`;
  const password = observedStringData(observed[R.storeCredentials]?.resource, "password") ?? newPassword();
  const image = { image: input.image, imagePullPolicy: input.imagePullPolicy };
  const object = (manifest: JsonObject, celQuery?: string) =>
    localObject(input.providerConfigName, manifest, celQuery);
  const secret = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: storeSecret, namespace: claim.namespace },
    type: "Opaque",
    stringData: { username: "postgres", password },
  };
  const composed = [
    { name: R.storeCredentials, resource: object(secret) },
    {
      name: R.store,
      resource: object(
        storePod({ name, namespace: claim.namespace, claim: claim.name, storeSecret, instance, image }),
        POD_READY,
      ),
    },
    { name: R.service, resource: object(storeService(name, claim.namespace, claim.name)) },
  ].map((c) => ({ ...c, ready: isReadyTrue(observed[c.name]?.resource) }));

  const pod = observedPod(observed[R.store]?.resource);
  const podUID = stringAt(pod, "metadata", "uid");
  const storeReady = isReadyTrue(observed[R.store]?.resource);
  const podName = `${claim.namespace}/${name}`;
  const managed: ManagedBackup = { ...previous, store: { host: name, secret: storeSecret }, instance };
  if (!previous && storeReady && podUID)
    Object.assign(managed, {
      backupID: uidOf(composite, STEP),
      podUsedNamespacedName: podName,
      podUsedUID: podUID,
    });
  const status = { status: { managed: { ...managed } } };

  if (previous && podUID && podUID !== previous.podUsedUID) {
    const message = `the pod ${podName} that took and held this backup's dump (uid ${previous.podUsedUID}) is gone, and pod uid ${podUID} in its place holds a later dump: this Backup no longer holds the state it was taken at; delete it and take a new Backup`;
    return {
      composed,
      compositePatch: status,
      compositeReady: false,
      requirements,
      conditions: [{ type: BACKUP_COMPLETE, status: "False", reason: "BackupLost", message }],
      results: [{ severity: "Warning", message }],
    };
  }
  const trouble = podTrouble(pod);
  const condition =
    managed.podUsedUID && storeReady
      ? {
          status: "True" as const,
          reason: BACKUP_COMPLETE,
          message: `the dump of PostgresqlInstance ${JSON.stringify(instanceRef)} is held by pod ${podName}, served at ${name}`,
        }
      : {
          status: "False" as const,
          reason: managed.podUsedUID ? "StoreUnavailable" : "BackupRunning",
          message: `${managed.podUsedUID ? "the store pod" : "pod"} ${podName} ${managed.podUsedUID ? "is not serving the dump yet" : "is taking the dump"}${trouble ? `: ${trouble}` : ""}`,
        };
  return {
    composed,
    compositePatch: status,
    requirements,
    conditions: [{ type: BACKUP_COMPLETE, ...condition }],
    results: trouble ? [{ severity: "Warning", message: condition.message }] : [],
  };
}

/** The Backup's status.managed as this step wrote it, if the dump was taken. */
export function recorded(composite: JsonObject): ManagedBackup | undefined {
  const status = isJsonObject(composite.status) ? composite.status : {};
  const managed = isJsonObject(status.managed) ? status.managed : undefined;
  const store = { host: stringAt(managed, "store", "host"), secret: stringAt(managed, "store", "secret") };
  const instance = {
    host: stringAt(managed, "instance", "host"),
    adminSecret: stringAt(managed, "instance", "adminSecret"),
  };
  if (!store.host || !store.secret || !instance.host || !instance.adminSecret) return undefined;
  return {
    ...(stringAt(managed, "backupID") ? { backupID: stringAt(managed, "backupID") } : {}),
    ...(stringAt(managed, "podUsedNamespacedName")
      ? { podUsedNamespacedName: stringAt(managed, "podUsedNamespacedName") }
      : {}),
    ...(stringAt(managed, "podUsedUID") ? { podUsedUID: stringAt(managed, "podUsedUID") } : {}),
    store: { host: store.host, secret: store.secret },
    instance: { host: instance.host, adminSecret: instance.adminSecret },
  };
}
