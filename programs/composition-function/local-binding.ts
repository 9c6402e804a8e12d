/**
 * A ServiceBinding to a local PostgreSQL instance (an XServiceBinding, anynines.com/v1, whose
 * spec.instanceRef names a PostgresqlInstance claim of the same namespace): a login role of its
 * own in the instance's server, and its credentials in a8s' shape. a8s writes a Secret
 * `<binding>-service-binding` with username, password, database and instance_service (the host;
 * the port is always 5432); so does this, and Crossplane reads the keys back as the `credentials`
 * Object's connection details, which become the binding's.
 *
 * The instance is an extra resource (local-instance.ts).
 *
 * Pure, but for the password: `newPassword` is asked only while no observed Secret has one.
 */
import { roleName } from "./binding-roles.js";
import type { LocalPostgresqlBindingInput } from "./input.js";
import type { JsonObject } from "./json.js";
import {
  fromSecret,
  kubernetesObject,
  observedStringData,
  secretConnectionDetails,
} from "./kubernetes-object.js";
import { INSTANCE_REQUIREMENT, instanceSelector, localInstance } from "./local-instance.js";
import { ADMIN_DATABASE, SCRIPT_SUCCEEDED, adminScriptPod } from "./local-postgresql.js";
import {
  claimOf,
  instanceRefOf,
  isReadyTrue,
  notReadyResult,
  stringAt,
  uidOf,
  type ObservedResource,
  type StepCondition,
  type StepResult,
} from "./step.js";

/** The composed resources' names in the pipeline. */
export const BINDING_RESOURCES = { credentials: "credentials", role: "role" } as const;

/** a8s' binding Secret keys, in the order a8s lists them. */
export const BINDING_KEYS = ["username", "password", "database", "instance_service"] as const;

export const INSTANCE_FOUND = "InstanceFound";
/** The one spec.serviceInstanceType this step binds: its instances are PostgresqlInstances. */
export const LOCAL_SERVICE_TYPE = "postgresql";

const STEP = "LocalPostgresqlBinding";

/**
 * The script of the role pod. No password is in it or in the pod spec: both come from Secrets
 * through the environment, and psql takes the new one as a variable, which it interpolates
 * (quoted, :'pw') only in statements it reads from a script, here stdin, never with -c.
 * `\gexec` runs the CREATE only when the role does not exist yet; ALTER then sets the password
 * on every run, so a run again after a failure ends in the same state.
 */
export const ROLE_SCRIPT = `set -eu
psql --no-psqlrc -v ON_ERROR_STOP=1 -v role="$ROLE_NAME" -v pw="$ROLE_PASSWORD" <<'SQL'
SELECT format('CREATE ROLE %I', :'role')
  WHERE NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = :'role')
\\gexec
ALTER ROLE :"role" WITH LOGIN PASSWORD :'pw';
GRANT ALL PRIVILEGES ON DATABASE ${ADMIN_DATABASE} TO :"role";
GRANT ALL ON SCHEMA public TO :"role";
SQL
`;

export function composeLocalPostgresqlBinding(
  composite: JsonObject,
  observed: Readonly<Record<string, ObservedResource>>,
  /** The extra resources delivered under INSTANCE_REQUIREMENT; undefined: not delivered yet. */
  instances: readonly JsonObject[] | undefined,
  input: LocalPostgresqlBindingInput,
  newPassword: () => string,
): StepResult {
  const claim = claimOf(composite, STEP);
  const instanceRef = instanceRefOf(composite, claim);
  // A binding of another type would hand PostgreSQL credentials to a client of that type; the
  // XRD admits other types for other backends' compositions (its CEL rule names a8s only).
  const type = stringAt(composite, "spec", "serviceInstanceType");
  if (type !== LOCAL_SERVICE_TYPE)
    return notReadyResult(
      INSTANCE_FOUND,
      "UnsupportedServiceType",
      `spec.serviceInstanceType is ${JSON.stringify(type ?? "")}, but ${JSON.stringify(instanceRef)} is a PostgresqlInstance: this backend binds ${LOCAL_SERVICE_TYPE} only; set serviceInstanceType: ${LOCAL_SERVICE_TYPE}, or bind an instance of that type with its backend's composition`,
    );
  const requirements = { [INSTANCE_REQUIREMENT]: instanceSelector(claim, instanceRef) };
  // Crossplane calls again with the instance (or none) right away: nothing to say or compose yet.
  if (instances === undefined) return { composed: [], requirements, conditions: [], results: [] };

  const where = `PostgresqlInstance ${JSON.stringify(instanceRef)}`;
  const inNamespace = `in namespace ${JSON.stringify(claim.namespace)}`;
  const resolved = localInstance(
    instances,
    claim,
    instanceRef,
    "the binding waits until its server is composed",
  );
  if (!("found" in resolved))
    return notReadyResult(INSTANCE_FOUND, resolved.reason, resolved.message, requirements);
  const { host, adminSecret } = resolved.found;

  const R = BINDING_RESOURCES;
  const uid = uidOf(composite, STEP);
  const secret = { name: `${claim.name}-service-binding`, namespace: claim.namespace };
  const credentialsObserved = observed[R.credentials];
  const password = observedStringData(credentialsObserved?.resource, "password") ?? newPassword();
  const stringData: Record<(typeof BINDING_KEYS)[number], string> = {
    username: roleName(uid),
    password,
    database: ADMIN_DATABASE,
    instance_service: host,
  };
  const credentials = kubernetesObject({
    manifest: { apiVersion: "v1", kind: "Secret", metadata: secret, type: "Opaque", stringData },
    providerConfigName: input.providerConfigName,
    readiness: { policy: "SuccessfulCreate" },
    connectionDetails: secretConnectionDetails(secret, BINDING_KEYS),
    writeConnectionSecretToRef: {
      namespace: input.connectionSecretNamespace,
      name: `${uid}-credentials`,
    },
  });

  const role = kubernetesObject({
    manifest: adminScriptPod({
      name: `${claim.name}-role`,
      namespace: claim.namespace,
      container: "role",
      script: ROLE_SCRIPT,
      instance: { host, adminSecret },
      image: input.image,
      imagePullPolicy: input.imagePullPolicy,
      env: [
        fromSecret("ROLE_NAME", secret.name, "username"),
        fromSecret("ROLE_PASSWORD", secret.name, "password"),
      ],
    }),
    providerConfigName: input.providerConfigName,
    readiness: { policy: "DeriveFromCelQuery", celQuery: SCRIPT_SUCCEEDED },
    // The pod's success is the binding's readiness: seen when it happens, not 30 s later.
    watch: true,
  });

  const credentialsReady = isReadyTrue(credentialsObserved?.resource);
  const roleReady = isReadyTrue(observed[R.role]?.resource);
  const found: StepCondition = {
    type: INSTANCE_FOUND,
    status: "True",
    reason: INSTANCE_FOUND,
    message: `${where} ${inNamespace} serves at ${host}`,
  };
  const details = credentialsObserved?.connectionDetails ?? {};
  return {
    composed: [
      { name: R.credentials, resource: credentials, ready: credentialsReady },
      { name: R.role, resource: role, ready: roleReady },
    ],
    compositePatch: { status: { managed: { secret, implemented: credentialsReady && roleReady } } },
    ...(Object.keys(details).length > 0 ? { connectionDetails: { ...details } } : {}),
    requirements,
    conditions: [found],
    results: [],
  };
}
