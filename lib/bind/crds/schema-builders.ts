/**
 * Small builders for structural OpenAPI v3 schemas (apiextensions.k8s.io/v1), so the CRD
 * files read like the Go types they are written from. Every node gets a `type`, which is
 * what the API server requires of a structural schema (pruning, defaulting and CEL rely on it).
 */

export interface ValidationRule {
  rule: string;
  message: string;
}

/** The subset of JSONSchemaProps the bind CRDs use. */
export interface Schema {
  type?: "object" | "array" | "string" | "integer" | "number" | "boolean";
  format?: string;
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: Schema;
  items?: Schema;
  enum?: string[];
  pattern?: string;
  minLength?: number;
  minItems?: number;
  minimum?: number;
  maximum?: number;
  default?: unknown;
  anyOf?: Schema[];
  "x-kubernetes-preserve-unknown-fields"?: boolean;
  "x-kubernetes-int-or-string"?: boolean;
  "x-kubernetes-list-type"?: "atomic" | "set" | "map";
  "x-kubernetes-list-map-keys"?: string[];
  "x-kubernetes-map-type"?: "atomic" | "granular";
  "x-kubernetes-validations"?: ValidationRule[];
}

/** Extra keywords for one node; `type`, `properties` and `items` come from the builder. */
export type Extra = Omit<Schema, "type" | "properties" | "items">;

export const str = (extra: Extra = {}): Schema => ({ type: "string", ...extra });
export const bool = (extra: Extra = {}): Schema => ({ type: "boolean", ...extra });
export const int32 = (extra: Extra = {}): Schema => ({ type: "integer", format: "int32", ...extra });
export const int64 = (extra: Extra = {}): Schema => ({ type: "integer", format: "int64", ...extra });
/** metav1.Time: RFC 3339 on the wire. */
export const dateTime = (extra: Extra = {}): Schema => str({ format: "date-time", ...extra });

/** An object with known fields; every field not listed is unknown (pruned, or refused under strict validation). */
export function obj(properties: Record<string, Schema>, required: string[] = [], extra: Extra = {}): Schema {
  return {
    type: "object",
    // The API server drops an empty `properties`; leaving it out keeps the stored CRD equal
    // to ours, so a second `pulumi up` sees no diff.
    ...(Object.keys(properties).length > 0 ? { properties } : {}),
    ...(required.length > 0 ? { required: [...required].sort() } : {}),
    ...extra,
  };
}

export const arrayOf = (items: Schema, extra: Extra = {}): Schema => ({ type: "array", items, ...extra });

/** map[string]T */
export const mapOf = (values: Schema, extra: Extra = {}): Schema => ({
  type: "object",
  additionalProperties: values,
  ...extra,
});

/** runtime.RawExtension and other free-form objects: kept as sent, not pruned. */
export const freeForm = (extra: Extra = {}): Schema => ({
  type: "object",
  "x-kubernetes-preserve-unknown-fields": true,
  ...extra,
});

/** intstr.IntOrString (ports, quantities): the one place a structural schema may omit `type`. */
export const intOrString = (extra: Extra = {}): Schema => ({
  anyOf: [{ type: "integer" }, { type: "string" }],
  "x-kubernetes-int-or-string": true,
  ...extra,
});

/** resource.Quantity, with the API machinery's serialization pattern. */
export const quantity = (): Schema =>
  intOrString({
    pattern:
      "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$",
  });

/** A CEL transition rule that refuses any change once the field is set. */
export const immutable = (message: string): Extra => ({
  "x-kubernetes-validations": [{ rule: "self == oldSelf", message }],
});

/**
 * kcp's conditions (bind/pkg/apis/third_party/conditions): that package has no
 * `+kubebuilder:validation:Optional`, so its fields without omitempty (type, status,
 * lastTransitionTime) are required.
 */
export const conditions = (): Schema =>
  arrayOf(
    obj(
      {
        type: str({ description: "Type of condition in CamelCase or in foo.example.com/CamelCase." }),
        status: str({ description: "Status of the condition, one of True, False, Unknown." }),
        severity: str({ description: "Error, Warning, Info or empty; set only when status is False." }),
        lastTransitionTime: dateTime(),
        reason: str(),
        message: str(),
      },
      ["type", "status", "lastTransitionTime"],
    ),
  );

/**
 * The root of a custom resource's schema. `metadata` stays a bare object: the API server
 * validates ObjectMeta itself and a CRD may not describe it beyond name/generateName.
 */
export function rootSchema(parts: {
  spec: Schema;
  status: Schema;
  specRequired: boolean;
  rules?: ValidationRule[];
}): Schema {
  return {
    type: "object",
    properties: {
      apiVersion: str(),
      kind: str(),
      metadata: { type: "object" },
      spec: parts.spec,
      status: parts.status,
    },
    ...(parts.specRequired ? { required: ["spec"] } : {}),
    ...(parts.rules ? { "x-kubernetes-validations": parts.rules } : {}),
  };
}

export interface PrinterColumn {
  name: string;
  type: "string" | "integer" | "number" | "boolean" | "date";
  jsonPath: string;
  priority?: number;
  description?: string;
}

export const readyColumn: PrinterColumn = {
  name: "Ready",
  type: "string",
  jsonPath: '.status.conditions[?(@.type=="Ready")].status',
};
export const ageColumn: PrinterColumn = {
  name: "Age",
  type: "date",
  jsonPath: ".metadata.creationTimestamp",
};

export interface CrdNames {
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  shortNames?: string[];
  categories?: string[];
}

export interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  subresources?: { status?: Record<string, never> };
  schema: { openAPIV3Schema: Schema };
  additionalPrinterColumns?: PrinterColumn[];
}

/** A plain apiextensions.k8s.io/v1 CustomResourceDefinition, ready for kubectl or @pulumi/kubernetes. */
export interface CustomResourceDefinition {
  apiVersion: "apiextensions.k8s.io/v1";
  kind: "CustomResourceDefinition";
  metadata: { name: string; labels: Record<string, string> };
  spec: {
    group: string;
    scope: "Namespaced" | "Cluster";
    names: CrdNames;
    versions: CrdVersion[];
  };
}

/**
 * One served-and-stored version with the status subresource, which every bind kind has
 * (`+kubebuilder:subresource:status`), so spec writers cannot set status.
 */
export function singleVersionCrd(def: {
  group: string;
  version: string;
  scope: "Namespaced" | "Cluster";
  names: CrdNames;
  schema: Schema;
  printerColumns: PrinterColumn[];
  labels: Record<string, string>;
}): CustomResourceDefinition {
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: `${def.names.plural}.${def.group}`, labels: { ...def.labels } },
    spec: {
      group: def.group,
      scope: def.scope,
      names: def.names,
      versions: [
        {
          name: def.version,
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: { openAPIV3Schema: def.schema },
          additionalPrinterColumns: def.printerColumns,
        },
      ],
    },
  };
}
