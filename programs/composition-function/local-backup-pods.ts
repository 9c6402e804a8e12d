/**
 * The pods of the local backend's Backup and Restore (local-backup.ts, local-restore.ts), pure
 * manifests. a8s keeps a backup in an object store of its own; here a Backup's dump is kept by a
 * store of its own: a PostgreSQL server in a pod beside the instance, which takes `pg_dump
 * --format=custom` of the instance's database once and holds it as a large object, served to a
 * Restore's pod. The dump lives as long as the Backup and its pod; deleting the Backup deletes it,
 * and a store pod deleted by someone loses it (the Backup then says so: local-backup.ts).
 */
import { ADMIN_DATABASE, ADMIN_USER, POSTGRESQL_PORT, type ManagedInstance } from "./local-postgresql.js";
import { fromSecret, restrictedSecurityContext } from "./kubernetes-object.js";
import type { JsonObject } from "./json.js";

/** The pod label the store's Service selects by; its value is the Backup claim's name. */
export const BACKUP_POD_LABEL = "klutch.anynines.com/backup";
/** Set once the dump is loaded, in the store's data volume: a container restarted in place keeps it. */
const LOADED = "/var/lib/postgresql/data/klutch-dump-loaded";

/**
 * The store's container: its own server (the image's entrypoint) in the background, then, on the
 * pod's first start only, the instance's database dumped and loaded as a large object. `pg_dump`
 * and `\lo_import` read their passwords from the environment; none is on a command line. The
 * image has dash and sleep, no coreutils beyond: files are made and emptied by redirection.
 */
export const STORE_SCRIPT = `set -eu
trap 'kill -TERM "$server" 2>/dev/null' TERM INT
docker-entrypoint.sh & server=$!
until pg_isready -q -h 127.0.0.1; do kill -0 "$server"; sleep 0.5; done
if [ ! -e ${LOADED} ]; then
  PGPASSWORD="$INSTANCE_PASSWORD" pg_dump --host="$INSTANCE_HOST" --username=${ADMIN_USER} \\
    --dbname=${ADMIN_DATABASE} --format=custom --file=/work/dump
  PGPASSWORD="$POSTGRES_PASSWORD" psql --no-psqlrc -v ON_ERROR_STOP=1 -h 127.0.0.1 -U ${ADMIN_USER} \\
    -d ${ADMIN_DATABASE} -c "\\\\lo_import /work/dump 'klutch backup'"
  : > /work/dump
  : > ${LOADED}
  echo "the dump of $INSTANCE_HOST is loaded"
fi
wait "$server"
`;

/**
 * The restore's container: the dump fetched from the store, then restored into the instance in
 * one transaction (`--single-transaction --exit-on-error`: all of it or nothing), dropping what
 * the dump recreates first (`--clean --if-exists`). Owners and grants come back as they were.
 */
export const RESTORE_SCRIPT = `set -eu
store() { PGPASSWORD="$STORE_PASSWORD" psql --no-psqlrc -v ON_ERROR_STOP=1 -h "$STORE_HOST" -U ${ADMIN_USER} -d ${ADMIN_DATABASE} "$@"; }
oid=$(store -tAc "SELECT oid FROM pg_largeobject_metadata ORDER BY oid LIMIT 1")
if [ -z "$oid" ]; then echo "the backup store $STORE_HOST holds no dump" >&2; exit 1; fi
store -c "\\\\lo_export $oid /work/dump"
PGPASSWORD="$INSTANCE_PASSWORD" pg_restore --host="$INSTANCE_HOST" --username=${ADMIN_USER} \\
  --dbname=${ADMIN_DATABASE} --clean --if-exists --single-transaction --exit-on-error /work/dump
echo "restored into $INSTANCE_HOST"
`;

export interface PodImage {
  image: string;
  imagePullPolicy: string;
}

type Instance = Pick<ManagedInstance, "host" | "adminSecret">;

const container = (name: string, script: string, image: PodImage, env: JsonObject[]): JsonObject => ({
  name,
  image: image.image,
  imagePullPolicy: image.imagePullPolicy,
  command: ["/bin/sh", "-c", script],
  env,
  // A failed run's last lines become its termination message, which the step shows on the claim.
  terminationMessagePolicy: "FallbackToLogsOnError",
  securityContext: restrictedSecurityContext(),
  volumeMounts: [{ name: "work", mountPath: "/work" }],
});

const instanceEnv = (instance: Instance) => [
  { name: "INSTANCE_HOST", value: instance.host },
  fromSecret("INSTANCE_PASSWORD", instance.adminSecret, "password"),
];

/** The store of one Backup: a bare pod, so that its uid says whether it is the one that took the dump. */
export function storePod(o: {
  name: string;
  namespace: string;
  claim: string;
  storeSecret: string;
  instance: Instance;
  image: PodImage;
}): JsonObject {
  const store = container("store", STORE_SCRIPT, o.image, [
    fromSecret("POSTGRES_PASSWORD", o.storeSecret, "password"),
    ...instanceEnv(o.instance),
  ]);
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: o.name, namespace: o.namespace, labels: { [BACKUP_POD_LABEL]: o.claim } },
    spec: {
      automountServiceAccountToken: false,
      containers: [
        {
          ...store,
          ports: [{ name: "postgresql", containerPort: POSTGRESQL_PORT, protocol: "TCP" }],
          // Ready once the dump is loaded: the Service sends a Restore to it only then.
          readinessProbe: { exec: { command: ["/bin/sh", "-c", `test -e ${LOADED}`] }, periodSeconds: 2 },
          volumeMounts: [
            { name: "work", mountPath: "/work" },
            { name: "data", mountPath: "/var/lib/postgresql/data" },
          ],
        },
      ],
      volumes: [
        { name: "work", emptyDir: {} },
        { name: "data", emptyDir: {} },
      ],
    },
  };
}

/** The store's Service, in front of the pod once it is Ready. */
export function storeService(name: string, namespace: string, claim: string): JsonObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace, labels: { [BACKUP_POD_LABEL]: claim } },
    spec: {
      type: "ClusterIP",
      selector: { [BACKUP_POD_LABEL]: claim },
      ports: [{ name: "postgresql", port: POSTGRESQL_PORT, targetPort: POSTGRESQL_PORT, protocol: "TCP" }],
    },
  };
}

/** A Restore's run: restarted in place on failure (the instance may be restarting), ready once it Succeeded. */
export function restorePod(o: {
  name: string;
  namespace: string;
  store: { host: string; secret: string };
  instance: Instance;
  image: PodImage;
}): JsonObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: o.name, namespace: o.namespace },
    spec: {
      restartPolicy: "OnFailure",
      automountServiceAccountToken: false,
      containers: [
        container("restore", RESTORE_SCRIPT, o.image, [
          { name: "STORE_HOST", value: o.store.host },
          fromSecret("STORE_PASSWORD", o.store.secret, "password"),
          ...instanceEnv(o.instance),
        ]),
      ],
      volumes: [{ name: "work", emptyDir: {} }],
    },
  };
}

/** provider-kubernetes' readiness query for a long-running pod: its Ready condition is True. */
export const POD_READY =
  "has(object.status) && has(object.status.conditions) && object.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')";
