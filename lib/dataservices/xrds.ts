/**
 * Upstream's data-service APIs, as anynines/klutchio defines them (crossplane-api/api/common/
 * servicebinding_definition.yaml and postgresql_definition.yaml, identical at v1.4.0, v1.5.0 and
 * main 0b4539e): the XRDs Klutch's anynines-dataservices Configuration installs, written here
 * field for field so that a stack whose Configuration cannot be pulled (local clusters) serves
 * the same API. The one thing left out is upstream's `supported:` key beside `properties`, which
 * only holds YAML anchors for the enums and is not part of the schema.
 */

export const DATASERVICES_GROUP = "anynines.com";
export const SERVICE_BINDING_XRD = `xservicebindings.${DATASERVICES_GROUP}`;
export const POSTGRESQL_XRD = `xpostgresqlinstances.${DATASERVICES_GROUP}`;
/** Upstream's default compositions, which a8s realises (the local stand-in takes their names). */
export const A8S_POSTGRESQL = "a8s-postgresql";
export const A8S_SERVICE_BINDING = "a8s-servicebinding";

type Json = Record<string, unknown>;

/** spec.serviceInstanceType's enum: Klutch's eight data-service types. */
export const SERVICE_INSTANCE_TYPES = [
  "keyvalue",
  "postgresql",
  "mongodb",
  "search",
  "logme2",
  "prometheus",
  "messaging",
  "mariadb",
];

const managedStatus: Json = {
  type: "object",
  properties: { managed: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
};

/** An XRD of the anynines.com group with one served version, v1, and upstream's managed status. */
export function xrd(
  plural: string,
  kind: string,
  claim: { kind: string; plural: string },
  defaultComposition: string,
  spec: Json,
  labels: Record<string, string>,
  extra: Json = {},
): Json {
  return {
    apiVersion: "apiextensions.crossplane.io/v1",
    kind: "CompositeResourceDefinition",
    metadata: { name: `${plural}.${DATASERVICES_GROUP}`, labels },
    spec: {
      group: DATASERVICES_GROUP,
      names: { kind, plural },
      claimNames: claim,
      defaultCompositionRef: { name: defaultComposition },
      ...extra,
      versions: [
        {
          name: "v1",
          served: true,
          referenceable: true,
          schema: { openAPIV3Schema: { properties: { spec, status: managedStatus } } },
        },
      ],
    },
  };
}

/** XServiceBinding / ServiceBinding: binds to an instance claim of the same namespace. */
export function serviceBindingXrd(labels: Record<string, string> = {}): Json {
  return xrd(
    "xservicebindings",
    "XServiceBinding",
    { kind: "ServiceBinding", plural: "servicebindings" },
    A8S_SERVICE_BINDING,
    {
      "x-kubernetes-validations": [
        {
          // a8s binds PostgreSQL only; other types need another composition.
          rule: "(!(self.compositionRef.name == '') && !(self.compositionRef.name == 'a8s-servicebinding')) || self.serviceInstanceType == 'postgresql'",
          message: "Selected service instance type is not supported.",
        },
      ],
      properties: {
        acceptsIncomplete: { type: "boolean" },
        instanceRef: { type: "string" },
        serviceInstanceType: { type: "string", enum: SERVICE_INSTANCE_TYPES },
        region: {
          description: "The region the object store will be deployed to\n",
          type: "string",
          enum: ["eu-central-1", "us-east-1"],
        },
        policy: { type: "string" },
      },
      required: ["instanceRef", "serviceInstanceType"],
    },
    labels,
  );
}

const A9S_PLANS = ["nano", "small", "big"].flatMap((size) =>
  ["", "-bionic", "-ssl", "-ssl-bionic"].map((v) => `postgresql-single-${size}${v}`),
);
const A9S_REPLICA_PLANS = ["small", "big"].flatMap((size) =>
  ["", "-bionic", "-ssl", "-ssl-bionic"].map((v) => `postgresql-replica-${size}${v}`),
);
const A8S_PLANS = ["replica", "single"].flatMap((kind) =>
  ["nano", "small", "medium", "big"].map((size) => `postgresql-${kind}-${size}`),
);

const anyOf = (field: string, values: string[]) =>
  `(${values.map((v) => `self.${field} == '${v}'`).join(" || ")})`;
const ref = (name: string) => `self.compositionRef.name == '${name}'`;
const only = (parameter: string, composition: string, other: string): Json => ({
  rule: `!(has(self.parameters) && has(self.parameters.${parameter})) || ${ref(composition)}`,
  message: `parameters.${parameter} is not supported for ${other}`,
});

const LOG_LEVELS = [
  "DEBUG5",
  "DEBUG4",
  "DEBUG3",
  "DEBUG2",
  "DEBUG1",
  "INFO",
  "NOTICE",
  "WARNING",
  "ERROR",
  "LOG",
  "FATAL",
  "PANIC",
];
const POSTGRES_BOOLEAN = ["on", "off"];
const atLeast = (min: number, message: string) => ({
  "x-kubernetes-validations": [{ rule: `self >= ${min}`, message }],
});

/** XPostgresqlInstance / PostgresqlInstance: service, plan, expose and the server parameters. */
export function postgresqlInstanceXrd(labels: Record<string, string> = {}): Json {
  return xrd(
    "xpostgresqlinstances",
    "XPostgresqlInstance",
    { kind: "PostgresqlInstance", plural: "postgresqlinstances" },
    A8S_POSTGRESQL,
    {
      "x-kubernetes-validations": [
        {
          rule: `(${ref("a9s-postgresql")} && ${anyOf("service", ["a9s-postgresql13", "a9s-postgresql15", "a9s-postgresql17"])}) || (${ref("a8s-postgresql")} && ${anyOf("service", ["a9s-postgresql13", "a9s-postgresql14"])})`,
          message: "Unsupported service used for postgresql",
        },
        {
          rule: `(${ref("a9s-postgresql")} && ${anyOf("plan", [...A9S_PLANS, ...A9S_REPLICA_PLANS])}) || (${ref("a8s-postgresql")} && ${anyOf("plan", A8S_PLANS)})`,
          message: "Unsupported plan used for postgresql",
        },
        {
          rule: `(${ref("a9s-postgresql")} && !(self.service == 'a9s-postgresql13') && !(self.plan.contains('bionic'))) || (self.service == 'a9s-postgresql13') || (${ref("a8s-postgresql")})`,
          message: "Bionic plans are only supported by a9s PostgreSQL 13",
        },
        ...["maxLocksPerTransaction", "sslCiphers", "sslMinProtocolVersion"].map((p) =>
          only(p, "a8s-postgresql", "a9s-postgresql"),
        ),
        ...[
          "dataChecksums",
          "effectiveCacheSize",
          "workMem",
          "maintenanceWorkMem",
          "idleInTransactionSessionTimeout",
          "rolePrivileges",
          "walLevelLogical",
        ].map((p) => only(p, "a9s-postgresql", "a8s-postgresql")),
      ],
      properties: {
        acceptsIncomplete: { type: "boolean" },
        service: {
          "x-kubernetes-validations": [{ rule: "self == oldSelf", message: "Service is an immutable field" }],
          description:
            "Service specifies the type and version of the Data Service Instance (e.g. a9s-postgresql13). There is a list of supported services and supported plans for each service.",
          type: "string",
        },
        plan: {
          description:
            "Plan specifies the service plan. There are options for single or clustered Data Service Instances and options for different underlying computing resources.",
          type: "string",
          "x-kubernetes-validations": [
            {
              rule: "!(self.contains('small') && oldSelf.contains('medium')) && !(self.contains('small') && oldSelf.contains('big')) && !(self.contains('medium') && oldSelf.contains('big'))",
              message: "Transition from bigger to smaller plan size is not supported.",
            },
            {
              rule: "!(self.contains('nano') && oldSelf.contains('small')) && !(self.contains('nano') && oldSelf.contains('medium'))&& !(self.contains('nano') && oldSelf.contains('big'))",
              message: "Transition from bigger to smaller plan size is not supported.",
            },
            {
              rule: "oldSelf.contains('ssl') == self.contains('ssl')",
              message: "Plan migrations not possible from Non-SSL to SSL and SSL to Non-SSL",
            },
            {
              rule: "oldSelf.contains('bionic') == self.contains('bionic')",
              message: "Plan migrations not possible from Non-Bionic to Bionic and Bionic to Non-Bionic",
            },
            {
              rule: "!(self.contains('-single-') && oldSelf.contains('-replica-'))",
              message: "Migration from clustered to single Data Service Instance is not supported.",
            },
          ],
        },
        expose: {
          description:
            "Expose specifies where (and how) the instances can be accessed from. There are currently 2 options supported. 'Internal', this option makes the instances accessible only within the K8s cluster. 'LoadBalancer', this option exposes the instances outside the K8s cluster they are running in, using a load balancer.",
          type: "string",
          enum: ["Internal", "LoadBalancer"],
        },
        parameters: {
          type: "object",
          properties: {
            dataChecksums: { type: "string", enum: ["enabled", "disabled"] },
            maxConnections: { type: "number" },
            effectiveCacheSize: { type: "string" },
            workMem: { type: "string" },
            maintenanceWorkMem: { type: "string" },
            tempFileLimit: {
              type: "integer",
              "x-kubernetes-validations": [
                {
                  rule: "self == -1 || self > 0",
                  message: "Must be either -1 (no limit) or a limit specified in kilobytes",
                },
              ],
            },
            trackIoTiming: { type: "string", enum: POSTGRES_BOOLEAN },
            archiveTimeout: { type: "integer" },
            statementTimeout: { type: "integer" },
            idleInTransactionSessionTimeout: {
              type: "integer",
              ...atLeast(0, "Must be greater than or equal to 0"),
            },
            rolePrivileges: {
              type: "array",
              items: { type: "string", enum: ["CREATEDB", "CREATEROLE", "REPLICATION"] },
            },
            walLevelLogical: { type: "boolean" },
            walWriterDelay: {
              type: "integer",
              "x-kubernetes-validations": [{ rule: "self > 0", message: "Must be greater than 0" }],
            },
            maxLocksPerTransaction: {
              type: "integer",
              ...atLeast(10, "Must be greater than or equal to 10"),
            },
            maxReplicationSlots: { type: "integer", ...atLeast(0, "Must be greater than or equal to 0") },
            maxWalSenders: { type: "integer", ...atLeast(0, "Must be greater than or equal to 0") },
            synchronousCommit: {
              type: "string",
              enum: ["on", "off", "local", "remote_write", "remote_apply"],
            },
            sslCiphers: { type: "string" },
            sslMinProtocolVersion: { type: "string", enum: ["TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"] },
            clientMinMessages: {
              type: "string",
              enum: ["DEBUG5", "DEBUG4", "DEBUG3", "DEBUG2", "DEBUG1", "LOG", "NOTICE", "WARNING", "ERROR"],
            },
            logMinMessages: { type: "string", enum: LOG_LEVELS },
            logMinErrorStatement: { type: "string", enum: LOG_LEVELS },
            logStatement: { type: "string", enum: ["none", "ddl", "mod", "all"] },
            logErrorVerbosity: { type: "string", enum: ["DEFAULT", "VERBOSE", "TERSE"] },
          },
        },
      },
      required: ["service", "plan"],
    },
    labels,
    { defaultCompositeDeletePolicy: "Foreground" },
  );
}
