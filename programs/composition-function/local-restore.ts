/**
 * A Restore into a local PostgreSQL instance (an XRestore, anynines.com/v1): the dump the Backup
 * claim spec.backupRef names holds, restored into the PostgresqlInstance claim spec.instanceRef
 * names, both of the Restore's namespace, by one run of a pod (local-backup-pods.ts).
 *
 * A restore runs once: when its pod has Succeeded the step records status.managed.restoreID (as
 * a8s-restore reports one), and on the calls after that composes nothing, so the pod goes and is
 * never run again (a pod deleted and made again would restore the same dump over later writes).
 * Recording first and dropping the pod on a later call means a lost status write reruns nothing.
 */
import type { LocalPostgresqlRestoreInput } from "./input.js";
import type { JsonObject } from "./json.js";
import { localObject } from "./kubernetes-object.js";
import { recorded } from "./local-backup.js";
import { restorePod } from "./local-backup-pods.js";
import {
  INSTANCE_REQUIREMENT,
  claimSelector,
  instanceSelector,
  localInstance,
  oneComposite,
} from "./local-instance.js";
import { SCRIPT_SUCCEEDED } from "./local-postgresql.js";
import { observedPod, podTrouble, resourceName, serviceTypeRefusal } from "./local-runs.js";
import {
  CompositeError,
  claimOf,
  conditionOf,
  describe,
  isReadyTrue,
  notReadyResult,
  stringAt,
  uidOf,
  type ObservedResource,
  type StepResult,
} from "./step.js";

/** The key the Backup is asked for, and delivered under, in the request's extra resources. */
export const BACKUP_REQUIREMENT = "backup";
export const RESTORE_RESOURCES = { run: "restore" } as const;
export const RESTORE_COMPLETE = "RestoreComplete";
const STEP = "LocalPostgresqlRestore";

export function composeLocalPostgresqlRestore(
  composite: JsonObject,
  observed: Readonly<Record<string, ObservedResource>>,
  /** The extra resources delivered under BACKUP_REQUIREMENT and INSTANCE_REQUIREMENT; undefined: not yet. */
  backups: readonly JsonObject[] | undefined,
  instances: readonly JsonObject[] | undefined,
  input: LocalPostgresqlRestoreInput,
): StepResult {
  const claim = claimOf(composite, STEP);
  const refusal = serviceTypeRefusal(composite, RESTORE_COMPLETE, "restores");
  if (refusal) return refusal;
  const field = (key: string, what: string) => {
    const value = stringAt(composite, "spec", key);
    if (!value)
      throw new CompositeError(
        `${describe(composite)} has no spec.${key}; set it to the name of the ${what} claim in namespace ${JSON.stringify(claim.namespace)}`,
      );
    return value;
  };
  const backupRef = field("backupRef", "Backup");
  const instanceRef = field("instanceRef", "PostgresqlInstance to restore into");
  const restoreID = stringAt(composite, "status", "managed", "restoreID");
  const done = (message: string): StepResult => ({
    composed: [],
    compositePatch: { status: { managed: { restoreID } } },
    conditions: [{ type: RESTORE_COMPLETE, status: "True", reason: RESTORE_COMPLETE, message }],
    results: [],
  });
  if (restoreID)
    return done(
      `Backup ${JSON.stringify(backupRef)} was restored into PostgresqlInstance ${JSON.stringify(instanceRef)}`,
    );

  const requirements = {
    [BACKUP_REQUIREMENT]: claimSelector("anynines.com/v1", "XBackup", claim.namespace, backupRef),
    [INSTANCE_REQUIREMENT]: instanceSelector(claim, instanceRef),
  };
  if (backups === undefined || instances === undefined)
    return { composed: [], requirements, conditions: [], results: [] };
  const waiting = (reason: string, message: string) =>
    notReadyResult(RESTORE_COMPLETE, reason, message, requirements);

  const where = `Backup ${JSON.stringify(backupRef)}`;
  const one = oneComposite(backups, where, claim.namespace, "XBackup");
  if (!("found" in one)) return waiting(`Backup${one.reason}`, one.message);
  const backup = recorded(one.found);
  if (!backup?.podUsedUID || !isReadyTrue(one.found)) {
    const why = stringAt(conditionOf(one.found, "BackupComplete"), "message");
    return waiting(
      "BackupNotReady",
      `${where} is not Ready${why ? ` (${why})` : ""}; the restore waits for it`,
    );
  }
  const instance = localInstance(
    instances,
    claim,
    instanceRef,
    "the restore waits until its server is composed",
  );
  if (!("found" in instance)) return waiting(instance.reason, instance.message);

  const name = resourceName(claim, "restore", "Restore");
  const pod = restorePod({
    name,
    namespace: claim.namespace,
    store: backup.store,
    instance: instance.found,
    image: { image: input.image, imagePullPolicy: input.imagePullPolicy },
  });
  const run = localObject(input.providerConfigName, pod, SCRIPT_SUCCEEDED);
  const succeeded = isReadyTrue(observed[RESTORE_RESOURCES.run]?.resource);
  const composed = [{ name: RESTORE_RESOURCES.run, resource: run, ready: succeeded }];
  if (succeeded)
    return {
      ...done(
        `${where} was restored into PostgresqlInstance ${JSON.stringify(instanceRef)} by pod ${claim.namespace}/${name}`,
      ),
      composed,
      compositePatch: { status: { managed: { restoreID: uidOf(composite, STEP) } } },
      requirements,
    };
  const trouble = podTrouble(observedPod(observed[RESTORE_RESOURCES.run]?.resource));
  const message = `pod ${claim.namespace}/${name} is restoring ${where} into PostgresqlInstance ${JSON.stringify(instanceRef)}${trouble ? `: ${trouble}` : ""}`;
  return {
    composed,
    requirements,
    conditions: [{ type: RESTORE_COMPLETE, status: "False", reason: "RestoreRunning", message }],
    results: trouble ? [{ severity: "Warning", message }] : [],
  };
}
