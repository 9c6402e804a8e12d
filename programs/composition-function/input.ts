/**
 * The function's input: the `input` block of a composition's pipeline step, checked and turned
 * into a typed step. Crossplane passes the block through as it stands in the Composition (no
 * schema checks it on the way), so every mistake is caught here, named by its place in the
 * input, with the value found and what to write instead.
 *
 * The input's kind says which step this is:
 * - `Resources`: the part of function-patch-and-transform's `Resources` (pt.fn.crossplane.io/v1beta1)
 *   that this project's compositions use; anything else is refused rather than ignored, so a
 *   composition never silently loses a transform or a patch type it relies on.
 * - `LocalPostgresqlInstance`, `LocalPostgresqlBinding`, `LocalPostgresqlBackup`,
 *   `LocalPostgresqlRestore`: a local PostgreSQL backend for Klutch's data-service claims
 *   (local-postgresql.ts, local-binding.ts, local-backup.ts, local-restore.ts).
 * - `A8sServiceBinding`: a8s's own ServiceBinding, as Klutch's `a8s-servicebinding` composes it,
 *   with a8s's credentials as the binding's connection details (a8s-binding.ts).
 * - `NetworkConnection`: the connector's XTCPConnection for a backend's credentials, which it
 *   rewrites to what the app cluster reaches (network-connection.ts).
 * - `A9sServiceBinding`: provider-anynines' ServiceBinding, as Klutch's `a9s-servicebinding`
 *   composes it (a9s-binding.ts).
 * - `NetworkConnections`: one XTCPConnection per endpoint the credentials of the claim's service
 *   type name, and those credentials rewritten to the paths (network-connections.ts).
 */
import { FieldPathError, parseFieldPath } from "./field-path.js";
import { isJsonObject, type JsonObject } from "./json.js";

/** The name the Function package is installed under, which compositions' `functionRef` names. */
export const FUNCTION_NAME = "function-klutch";
export const INPUT_API_VERSION = "fn.klutch.anynines.com/v1alpha1";
export const RESOURCES_KIND = "Resources";
export const LOCAL_POSTGRESQL_INSTANCE_KIND = "LocalPostgresqlInstance";
export const LOCAL_POSTGRESQL_BINDING_KIND = "LocalPostgresqlBinding";
export const NETWORK_CONNECTION_KIND = "NetworkConnection";
export const A8S_SERVICE_BINDING_KIND = "A8sServiceBinding";
export const A9S_SERVICE_BINDING_KIND = "A9sServiceBinding";
export const NETWORK_CONNECTIONS_KIND = "NetworkConnections";
export const LOCAL_POSTGRESQL_BACKUP_KIND = "LocalPostgresqlBackup";
export const LOCAL_POSTGRESQL_RESTORE_KIND = "LocalPostgresqlRestore";
export const INPUT_KINDS = [
  RESOURCES_KIND,
  LOCAL_POSTGRESQL_INSTANCE_KIND,
  LOCAL_POSTGRESQL_BINDING_KIND,
  LOCAL_POSTGRESQL_BACKUP_KIND,
  LOCAL_POSTGRESQL_RESTORE_KIND,
  A8S_SERVICE_BINDING_KIND,
  A9S_SERVICE_BINDING_KIND,
  NETWORK_CONNECTION_KIND,
  NETWORK_CONNECTIONS_KIND,
] as const;
export type InputKind = (typeof INPUT_KINDS)[number];

/** Kubernetes' image pull policies; the local backends default to Never (the node holds the image). */
export const IMAGE_PULL_POLICIES = ["Never", "IfNotPresent", "Always"] as const;
export type ImagePullPolicy = (typeof IMAGE_PULL_POLICIES)[number];

export const PATCH_TYPES = ["FromCompositeFieldPath", "ToCompositeFieldPath"] as const;
export type PatchType = (typeof PATCH_TYPES)[number];

/** Optional skips a patch whose source is missing; Required also holds back a resource not created yet. */
export const FROM_FIELD_PATH_POLICIES = ["Optional", "Required"] as const;
export type FromFieldPathPolicy = (typeof FROM_FIELD_PATH_POLICIES)[number];

export const READINESS_CHECK_TYPES = ["MatchCondition", "None"] as const;
export type ReadinessCheckType = (typeof READINESS_CHECK_TYPES)[number];

export interface PatchTemplate {
  type: PatchType;
  fromFieldPath: string;
  /** Defaults to fromFieldPath, as in function-patch-and-transform. */
  toFieldPath: string;
  fromFieldPathPolicy: FromFieldPathPolicy;
}

export type ReadinessCheck =
  { type: "MatchCondition"; matchCondition: { type: string; status: string } } | { type: "None" };

export interface ResourceTemplate {
  /** The composed resource's name in the pipeline (its crossplane.io/composition-resource-name). */
  name: string;
  base: JsonObject;
  patches: PatchTemplate[];
  /** Empty: ready when the Ready condition is True. */
  readinessChecks: ReadinessCheck[];
}

export interface ResourcesInput {
  kind: typeof RESOURCES_KIND;
  resources: ResourceTemplate[];
}

/** The local PostgreSQL server a PostgresqlInstance claim stands for (local-postgresql.ts). */
/** Kubernetes' default DNS domain, which the local nodes use too. */
export const DEFAULT_CLUSTER_DOMAIN = "cluster.local";

export interface LocalPostgresqlInstanceInput {
  kind: typeof LOCAL_POSTGRESQL_INSTANCE_KIND;
  /** The PostgreSQL image the node holds. */
  image: string;
  imagePullPolicy: ImagePullPolicy;
  /** The provider-kubernetes ProviderConfig the composed Objects use. */
  providerConfigName: string;
  /** The cluster's DNS domain, for the instance's fully qualified host name. */
  clusterDomain: string;
}

/** A login role in a local PostgreSQL server, with a8s-shaped credentials (local-binding.ts). */
export interface LocalPostgresqlBindingInput {
  kind: typeof LOCAL_POSTGRESQL_BINDING_KIND;
  /** The image the role pod runs psql from: the instance's PostgreSQL image. */
  image: string;
  imagePullPolicy: ImagePullPolicy;
  providerConfigName: string;
  /** Where the composed Objects write their connection secrets (Crossplane reads them back). */
  connectionSecretNamespace: string;
}

/** A Backup's store, or a Restore's run, of a local PostgreSQL instance (local-backup.ts, local-restore.ts). */
export interface LocalPostgresqlRunInput<K extends string> {
  kind: K;
  /** The PostgreSQL image the node holds: its server keeps a dump, its pg_dump and pg_restore move it. */
  image: string;
  imagePullPolicy: ImagePullPolicy;
  providerConfigName: string;
}
export type LocalPostgresqlBackupInput = LocalPostgresqlRunInput<typeof LOCAL_POSTGRESQL_BACKUP_KIND>;
export type LocalPostgresqlRestoreInput = LocalPostgresqlRunInput<typeof LOCAL_POSTGRESQL_RESTORE_KIND>;

/** a8s's ServiceBinding in a provider-kubernetes Object, its credentials read back (a8s-binding.ts). */
export interface A8sServiceBindingInput {
  kind: typeof A8S_SERVICE_BINDING_KIND;
  /** The provider-kubernetes ProviderConfig for the control plane, where a8s runs. */
  providerConfigName: string;
  /** Where the Object writes the credentials it reads (Crossplane reads them back). */
  connectionSecretNamespace: string;
}

/** The connector's XTCPConnection for a backend's credentials (network-connection.ts). */
export interface NetworkConnectionInput {
  kind: typeof NETWORK_CONNECTION_KIND;
  /** The composed resource whose observed connection details are the backend's credentials. */
  credentialsFrom: string;
  /** The credentials' key holding the instance's host (a8s: instance_service, a9s: host). */
  hostKey: string;
  /** The credentials' key holding the port; without it, or when the key is missing, defaultPort. */
  portKey?: string;
  defaultPort?: number;
  /** The connector implementation to ask for; without it, the XRD's default composition applies. */
  implementation?: string;
  /** As NetworkConnectionsInput's: an instance host in one keeps its name (instance-names.ts). */
  instanceZones?: string[];
}

/** provider-anynines' ServiceBinding as upstream composes it; nothing to choose (a9s-binding.ts). */
export interface A9sServiceBindingInput {
  kind: typeof A9S_SERVICE_BINDING_KIND;
}

/** One XTCPConnection per endpoint of a binding's credentials (network-connections.ts). */
export interface NetworkConnectionsInput {
  kind: typeof NETWORK_CONNECTIONS_KIND;
  /** The composed resource whose observed connection details are the binding's credentials. */
  credentialsFrom: string;
  /** The connector implementation to ask for; without it, the XRD's default composition applies. */
  implementation?: string;
  /**
   * DNS zones the app clusters' instance-names servers answer: an instance host in one of them
   * stays in the Secret (only its port is the path's), so TLS clients still verify its name.
   */
  instanceZones?: string[];
}

export type FunctionInput =
  | ResourcesInput
  | LocalPostgresqlInstanceInput
  | LocalPostgresqlBindingInput
  | LocalPostgresqlBackupInput
  | LocalPostgresqlRestoreInput
  | A8sServiceBindingInput
  | A9sServiceBindingInput
  | NetworkConnectionInput
  | NetworkConnectionsInput;

/** A mistake in the input; its message names the field, the value found and the fix. */
export class InputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InputError";
  }
}

const show = (value: unknown): string => (value === undefined ? "nothing" : JSON.stringify(value));

/** Keys a level of the input may have; any other is refused, naming the ones allowed. */
function onlyKeys(where: string, object: JsonObject, allowed: readonly string[]): void {
  const unknown = Object.keys(object).filter((k) => !allowed.includes(k));
  if (unknown.length > 0)
    throw new InputError(
      `${where}: unsupported field${unknown.length > 1 ? "s" : ""} ${unknown.map((k) => JSON.stringify(k)).join(", ")}; ` +
        `${FUNCTION_NAME} supports only ${allowed.join(", ")} here`,
    );
}

function nonEmptyString(where: string, value: unknown, fix: string): string {
  if (typeof value !== "string" || value === "")
    throw new InputError(`${where} is ${show(value)}; it must be a non-empty string (${fix})`);
  return value;
}

function fieldPath(where: string, value: unknown): string {
  const path = nonEmptyString(where, value, "a field path such as spec.port or metadata.labels[a.b/c]");
  try {
    parseFieldPath(path);
  } catch (e) {
    if (e instanceof FieldPathError) throw new InputError(`${where}: ${e.message}`);
    throw e;
  }
  return path;
}

const KINDS_TEXT = `${INPUT_KINDS.slice(0, -1).join(", ")} or ${INPUT_KINDS[INPUT_KINDS.length - 1]}`;

/**
 * The step a function input asks for; throws an InputError for a missing input, another
 * apiVersion or kind, and any field the step does not support or that is missing or malformed.
 */
export function parseInput(input: unknown): FunctionInput {
  const expected = `apiVersion ${INPUT_API_VERSION}, kind ${KINDS_TEXT}`;
  if (!isJsonObject(input) || Object.keys(input).length === 0)
    throw new InputError(
      `the pipeline step has input ${show(input)}; ${FUNCTION_NAME} needs an input with ${expected}`,
    );
  if (input.apiVersion !== INPUT_API_VERSION || !INPUT_KINDS.includes(input.kind as InputKind))
    throw new InputError(
      `the input has apiVersion ${show(input.apiVersion)}, kind ${show(input.kind)}; ${FUNCTION_NAME} takes ${expected}`,
    );
  switch (input.kind as InputKind) {
    case RESOURCES_KIND:
      return { kind: RESOURCES_KIND, resources: parseResources(input) };
    case LOCAL_POSTGRESQL_INSTANCE_KIND:
      return parseLocalPostgresqlInstance(input);
    case LOCAL_POSTGRESQL_BINDING_KIND:
      return parseLocalPostgresqlBinding(input);
    case LOCAL_POSTGRESQL_BACKUP_KIND:
      return parseLocalPostgresqlRun(input, LOCAL_POSTGRESQL_BACKUP_KIND);
    case LOCAL_POSTGRESQL_RESTORE_KIND:
      return parseLocalPostgresqlRun(input, LOCAL_POSTGRESQL_RESTORE_KIND);
    case A8S_SERVICE_BINDING_KIND:
      return parseA8sServiceBinding(input);
    case A9S_SERVICE_BINDING_KIND:
      onlyKeys("input", input, HEADER);
      return { kind: A9S_SERVICE_BINDING_KIND };
    case NETWORK_CONNECTION_KIND:
      return parseNetworkConnection(input);
    case NETWORK_CONNECTIONS_KIND:
      return parseNetworkConnections(input);
  }
}

const HEADER = ["apiVersion", "kind", "metadata"];

/** The resource templates of a `Resources` input: at least one, each name once. */
function parseResources(input: JsonObject): ResourceTemplate[] {
  onlyKeys("input", input, [...HEADER, "resources"]);
  const resources = input.resources;
  // function-patch-and-transform refuses an input without resources too (ValidateResources).
  if (resources === undefined || (Array.isArray(resources) && resources.length === 0))
    throw new InputError(
      `input.resources: resources are required; list at least one composed resource (name, base, patches)`,
    );
  if (!Array.isArray(resources))
    throw new InputError(`input.resources is ${show(resources)}; it must be a list of composed resources`);

  const templates = resources.map((r: unknown, i) => parseResource(`input.resources[${i}]`, r));
  const seen = new Set<string>();
  for (const [i, t] of templates.entries()) {
    if (seen.has(t.name))
      throw new InputError(
        `input.resources[${i}].name ${show(t.name)} is used twice; each composed resource needs a name of its own`,
      );
    seen.add(t.name);
  }
  return templates;
}

function parseLocalPostgresqlInstance(input: JsonObject): LocalPostgresqlInstanceInput {
  onlyKeys("input", input, [...HEADER, "image", "imagePullPolicy", "providerConfigName", "clusterDomain"]);
  return {
    kind: LOCAL_POSTGRESQL_INSTANCE_KIND,
    clusterDomain:
      input.clusterDomain === undefined
        ? DEFAULT_CLUSTER_DOMAIN
        : nonEmptyString(
            "input.clusterDomain",
            input.clusterDomain,
            `the cluster's DNS domain (default ${DEFAULT_CLUSTER_DOMAIN})`,
          ),
    image: nonEmptyString("input.image", input.image, "the PostgreSQL image the node holds"),
    imagePullPolicy: imagePullPolicy(input.imagePullPolicy),
    providerConfigName: nonEmptyString(
      "input.providerConfigName",
      input.providerConfigName,
      "the name of the provider-kubernetes ProviderConfig for the local cluster",
    ),
  };
}

function parseLocalPostgresqlBinding(input: JsonObject): LocalPostgresqlBindingInput {
  onlyKeys("input", input, [
    ...HEADER,
    "image",
    "imagePullPolicy",
    "providerConfigName",
    "connectionSecretNamespace",
  ]);
  return {
    kind: LOCAL_POSTGRESQL_BINDING_KIND,
    image: nonEmptyString("input.image", input.image, "the PostgreSQL image the node holds, for psql"),
    imagePullPolicy: imagePullPolicy(input.imagePullPolicy),
    providerConfigName: nonEmptyString(
      "input.providerConfigName",
      input.providerConfigName,
      "the name of the provider-kubernetes ProviderConfig for the local cluster",
    ),
    connectionSecretNamespace: dnsLabel(
      "input.connectionSecretNamespace",
      input.connectionSecretNamespace,
      "the namespace the composed Objects write their connection secrets to, e.g. crossplane-system",
    ),
  };
}

function parseLocalPostgresqlRun<K extends string>(input: JsonObject, kind: K): LocalPostgresqlRunInput<K> {
  onlyKeys("input", input, [...HEADER, "image", "imagePullPolicy", "providerConfigName"]);
  return {
    kind,
    image: nonEmptyString(
      "input.image",
      input.image,
      "the PostgreSQL image the node holds, for pg_dump and pg_restore",
    ),
    imagePullPolicy: imagePullPolicy(input.imagePullPolicy),
    providerConfigName: nonEmptyString(
      "input.providerConfigName",
      input.providerConfigName,
      "the name of the provider-kubernetes ProviderConfig for the local cluster",
    ),
  };
}

function parseA8sServiceBinding(input: JsonObject): A8sServiceBindingInput {
  onlyKeys("input", input, [...HEADER, "providerConfigName", "connectionSecretNamespace"]);
  return {
    kind: A8S_SERVICE_BINDING_KIND,
    providerConfigName: nonEmptyString(
      "input.providerConfigName",
      input.providerConfigName,
      "the name of the provider-kubernetes ProviderConfig for the control plane, e.g. kubernetes-provider",
    ),
    connectionSecretNamespace: dnsLabel(
      "input.connectionSecretNamespace",
      input.connectionSecretNamespace,
      "the namespace the composed Object writes its connection secret to, e.g. crossplane-system",
    ),
  };
}

function parseNetworkConnection(input: JsonObject): NetworkConnectionInput {
  onlyKeys("input", input, [
    ...HEADER,
    "credentialsFrom",
    "hostKey",
    "portKey",
    "defaultPort",
    "implementation",
    "instanceZones",
  ]);
  const parsed: NetworkConnectionInput = {
    kind: NETWORK_CONNECTION_KIND,
    credentialsFrom: nonEmptyString(
      "input.credentialsFrom",
      input.credentialsFrom,
      "the name of the composed resource whose connection details are the backend's credentials, e.g. credentials",
    ),
    hostKey: nonEmptyString(
      "input.hostKey",
      input.hostKey,
      "the credentials' key holding the instance's host, e.g. instance_service for a8s or host for a9s",
    ),
  };
  if (input.portKey !== undefined)
    parsed.portKey = nonEmptyString(
      "input.portKey",
      input.portKey,
      "the credentials' key holding the port, e.g. port",
    );
  if (input.defaultPort !== undefined) {
    const port = input.defaultPort;
    if (typeof port !== "number" || !Number.isInteger(port) || port < 1 || port > 65535)
      throw new InputError(
        `input.defaultPort is ${show(port)}; it must be a port number from 1 to 65535, e.g. 5432 for a8s PostgreSQL`,
      );
    parsed.defaultPort = port;
  }
  if (input.instanceZones !== undefined) parsed.instanceZones = zonesOf(input.instanceZones);
  // The connection needs a port: from the credentials, or the one the backend always uses.
  if (parsed.portKey === undefined && parsed.defaultPort === undefined)
    throw new InputError(
      `input has neither portKey nor defaultPort; set portKey to the credentials' port key, or defaultPort to the port the backend always uses (5432 for a8s PostgreSQL)`,
    );
  if (input.implementation !== undefined) parsed.implementation = implementationOf(input.implementation);
  return parsed;
}

function parseNetworkConnections(input: JsonObject): NetworkConnectionsInput {
  onlyKeys("input", input, [...HEADER, "credentialsFrom", "implementation", "instanceZones"]);
  return {
    kind: NETWORK_CONNECTIONS_KIND,
    credentialsFrom: nonEmptyString(
      "input.credentialsFrom",
      input.credentialsFrom,
      "the name of the composed resource whose connection details are the binding's credentials, e.g. a9s-servicebinding",
    ),
    ...(input.implementation !== undefined ? { implementation: implementationOf(input.implementation) } : {}),
    ...(input.instanceZones !== undefined ? { instanceZones: zonesOf(input.instanceZones) } : {}),
  };
}

/** DNS names, lower case, without the root's trailing dot: the zones an instance name may be kept in. */
function zonesOf(value: unknown): string[] {
  const zones = listOf("input.instanceZones", value);
  return zones.map((zone, i) => {
    const where = `input.instanceZones[${i}]`;
    const name = nonEmptyString(where, zone, "a DNS zone such as service.dc1.consul").toLowerCase();
    const labels = name.replace(/\.$/, "").split(".");
    if (name.length > 253 || !labels.every((l) => /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(l)))
      throw new InputError(
        `${where} is ${show(zone)}; it must be a DNS name of labels joined by dots, such as service.dc1.consul`,
      );
    return labels.join(".");
  });
}

function implementationOf(value: unknown): string {
  return dnsLabel(
    "input.implementation",
    value,
    "a connector implementation such as proxy; the connection then uses composition xtcpconnections-<implementation>",
  );
}

function imagePullPolicy(value: unknown): ImagePullPolicy {
  if (value === undefined) return "Never";
  if (!IMAGE_PULL_POLICIES.includes(value as ImagePullPolicy))
    throw new InputError(
      `input.imagePullPolicy is ${show(value)}; it must be ${IMAGE_PULL_POLICIES.join(", ")} (or left out for Never: the node holds the image)`,
    );
  return value as ImagePullPolicy;
}

/** A lower-case RFC 1123 label, as namespace names and the names built from it must be. */
function dnsLabel(where: string, value: unknown, fix: string): string {
  const label = nonEmptyString(where, value, fix);
  if (label.length > 63 || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(label))
    throw new InputError(
      `${where} is ${show(label)}; it must be a DNS label: at most 63 lower-case letters, digits and "-", starting and ending with a letter or digit (${fix})`,
    );
  return label;
}

function parseResource(where: string, raw: unknown): ResourceTemplate {
  if (!isJsonObject(raw))
    throw new InputError(`${where} is ${show(raw)}; it must be an object with name, base and patches`);
  onlyKeys(where, raw, ["name", "base", "patches", "readinessChecks"]);
  const name = nonEmptyString(`${where}.name`, raw.name, "the composed resource's name in the pipeline");
  const at = `${where} ${JSON.stringify(name)}:`;
  const base = raw.base;
  if (!isJsonObject(base))
    throw new InputError(
      `${at} base is ${show(base)}; it must be the composed resource's manifest (apiVersion, kind, spec)`,
    );
  nonEmptyString(`${at} base.apiVersion`, base.apiVersion, "the composed resource's apiVersion");
  nonEmptyString(`${at} base.kind`, base.kind, "the composed resource's kind");

  const patches = listOf(`${at} patches`, raw.patches).map((p, i) => parsePatch(`${at} patches[${i}]`, p));
  const checks = listOf(`${at} readinessChecks`, raw.readinessChecks).map((c, i) =>
    parseReadinessCheck(`${at} readinessChecks[${i}]`, c),
  );
  return { name, base, patches, readinessChecks: checks };
}

function listOf(where: string, value: unknown): unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new InputError(`${where} is ${show(value)}; it must be a list`);
  return value as unknown[];
}

function parsePatch(where: string, raw: unknown): PatchTemplate {
  if (!isJsonObject(raw))
    throw new InputError(`${where} is ${show(raw)}; it must be an object with type and fromFieldPath`);
  const type = raw.type;
  if (!PATCH_TYPES.includes(type as PatchType))
    throw new InputError(
      `${where}.type is ${show(type)}; ${FUNCTION_NAME} supports patch types ${PATCH_TYPES.join(", ")}`,
    );
  onlyKeys(where, raw, ["type", "fromFieldPath", "toFieldPath", "policy"]);
  const fromFieldPath = fieldPath(`${where}.fromFieldPath`, raw.fromFieldPath);
  const toFieldPath =
    raw.toFieldPath === undefined ? fromFieldPath : fieldPath(`${where}.toFieldPath`, raw.toFieldPath);
  return {
    type: type as PatchType,
    fromFieldPath,
    toFieldPath,
    fromFieldPathPolicy: parsePolicy(where, raw.policy),
  };
}

function parsePolicy(where: string, policy: unknown): FromFieldPathPolicy {
  if (policy === undefined) return "Optional";
  if (!isJsonObject(policy))
    throw new InputError(
      `${where}.policy is ${show(policy)}; it must be an object such as {fromFieldPath: Required}`,
    );
  onlyKeys(`${where}.policy`, policy, ["fromFieldPath"]);
  const value = policy.fromFieldPath;
  if (value === undefined) return "Optional";
  if (!FROM_FIELD_PATH_POLICIES.includes(value as FromFieldPathPolicy))
    throw new InputError(
      `${where}.policy.fromFieldPath is ${show(value)}; it must be ${FROM_FIELD_PATH_POLICIES.join(" or ")}`,
    );
  return value as FromFieldPathPolicy;
}

function parseReadinessCheck(where: string, raw: unknown): ReadinessCheck {
  if (!isJsonObject(raw)) throw new InputError(`${where} is ${show(raw)}; it must be an object with a type`);
  const type = raw.type;
  if (type === "None") {
    onlyKeys(where, raw, ["type"]);
    return { type };
  }
  if (type === "MatchCondition") {
    onlyKeys(where, raw, ["type", "matchCondition"]);
    const match = raw.matchCondition;
    if (!isJsonObject(match))
      throw new InputError(
        `${where}.matchCondition is ${show(match)}; type MatchCondition needs matchCondition {type, status}, e.g. {type: Ready, status: "True"}`,
      );
    onlyKeys(`${where}.matchCondition`, match, ["type", "status"]);
    return {
      type,
      matchCondition: {
        type: nonEmptyString(`${where}.matchCondition.type`, match.type, "a condition type such as Ready"),
        status: nonEmptyString(
          `${where}.matchCondition.status`,
          match.status,
          'a condition status such as "True"',
        ),
      },
    };
  }
  throw new InputError(
    `${where}.type is ${show(type)}; ${FUNCTION_NAME} supports readiness check types ${READINESS_CHECK_TYPES.join(", ")}`,
  );
}
