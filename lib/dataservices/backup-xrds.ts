/**
 * Upstream's Backup and Restore APIs, field for field as anynines/klutchio defines them
 * (crossplane-api/api/common/backup_definition.yaml and restore_definition.yaml, main 0b4539e,
 * the same at v1.5.0): what the default `exportedApis` bind as `backups` and `restores`. The
 * restore XRD's enum lists `messaging` twice upstream; it is listed once here (the same set).
 */
import { SERVICE_INSTANCE_TYPES, xrd } from "./xrds";

type Json = Record<string, unknown>;

export const BACKUP_XRD = "xbackups.anynines.com";
export const RESTORE_XRD = "xrestores.anynines.com";
/** Upstream's default compositions, which a8s realises (the local stand-in takes their names). */
export const A8S_BACKUP = "a8s-backup";
export const A8S_RESTORE = "a8s-restore";

const serviceInstanceType = { type: "string", enum: SERVICE_INSTANCE_TYPES };

/** Upstream's rule: a8s's composition backs up and restores PostgreSQL only. */
const a8sPostgresqlOnly = (composition: string): Json => ({
  rule: `(!(self.compositionRef.name == '') && !(self.compositionRef.name == '${composition}')) || self.serviceInstanceType == 'postgresql'`,
  message: "Selected service instance type is not supported.",
});

/** XBackup / Backup: a backup of the instance claim spec.instanceRef names, in the same namespace. */
export function backupXrd(labels: Record<string, string> = {}): Json {
  return xrd(
    "xbackups",
    "XBackup",
    { kind: "Backup", plural: "backups" },
    A8S_BACKUP,
    {
      "x-kubernetes-validations": [a8sPostgresqlOnly(A8S_BACKUP)],
      properties: { instanceRef: { type: "string" }, serviceInstanceType },
      required: ["instanceRef", "serviceInstanceType"],
    },
    labels,
  );
}

/** XRestore / Restore: the Backup claim spec.backupRef names, restored into spec.instanceRef. */
export function restoreXrd(labels: Record<string, string> = {}): Json {
  return xrd(
    "xrestores",
    "XRestore",
    { kind: "Restore", plural: "restores" },
    A8S_RESTORE,
    {
      "x-kubernetes-validations": [
        {
          rule: `self.compositionRef.name != '${A8S_RESTORE}' || ( has(self.instanceRef) && self.instanceRef != '')`,
          message: "restores without instance ref are not supported for a8s",
        },
        a8sPostgresqlOnly(A8S_RESTORE),
      ],
      properties: { backupRef: { type: "string" }, instanceRef: { type: "string" }, serviceInstanceType },
      required: ["backupRef", "serviceInstanceType"],
    },
    labels,
  );
}
