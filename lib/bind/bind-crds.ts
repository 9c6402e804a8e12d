/**
 * The klutch-bind CustomResourceDefinitions, written from the klutchio Go API types
 * (bind/pkg/apis/bind/v1alpha1 and the example backend's APIServiceExportTemplate): the
 * same names, scopes, required fields, enums, patterns and CEL rules, so the API server
 * validates bind objects as it would with Klutch's own CRDs installed.
 */

export const BIND_GROUP = "klutch.anynines.com";
export const EXAMPLE_BACKEND_GROUP = "example-backend.klutch.anynines.com";
export const BIND_VERSION = "v1alpha1";

type Schema = Record<string, unknown>;

const str = (extra: Schema = {}): Schema => ({ type: "string", ...extra });
const bool = (extra: Schema = {}): Schema => ({ type: "boolean", ...extra });
const arrayOf = (items: Schema, extra: Schema = {}): Schema => ({ type: "array", items, ...extra });
const obj = (properties: Record<string, Schema>, required: string[] = [], extra: Schema = {}): Schema => ({
  type: "object",
  // The API server drops an empty `properties`; leaving it out keeps the stored CRD equal to ours.
  ...(Object.keys(properties).length > 0 ? { properties } : {}),
  ...(required.length > 0 ? { required } : {}),
  ...extra,
});
/** A runtime.RawExtension: any object, kept as is. */
const raw = (): Schema => ({ type: "object", "x-kubernetes-preserve-unknown-fields": true });
const immutable = (what: string) => ({
  "x-kubernetes-validations": [{ rule: "self == oldSelf", message: `${what} is immutable` }],
});

/** Conditions as the kcp conditions API defines them (type and status required). */
const conditions = (): Schema =>
  arrayOf(
    obj(
      {
        type: str({ minLength: 1 }),
        status: str({ minLength: 1 }),
        severity: str(),
        lastTransitionTime: str({ format: "date-time" }),
        reason: str(),
        message: str(),
      },
      ["type", "status"],
    ),
  );

const groupResource = () => ({
  group: str({
    default: "",
    pattern: "^(|[a-z0-9]([-a-z0-9]*[a-z0-9](\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?)$",
  }),
  resource: str({ pattern: "^[a-z][-a-z0-9]*[a-z0-9]$" }),
});

const matchers = () => arrayOf(obj({ pattern: str() }));

const resourceSelector = (): Schema =>
  obj(
    {
      names: arrayOf(str(), { default: ["*"] }),
      namespaces: arrayOf(str(), { default: ["*"] }),
      labelSelectors: arrayOf({ type: "object", additionalProperties: str() }),
      fieldSelectors: arrayOf(str()),
      owner: str({ enum: ["Provider", "Consumer"] }),
    },
    [],
    { default: {} },
  );

function permissionClaimProperties(): Record<string, Schema> {
  return {
    ...groupResource(),
    version: str({ minLength: 1 }),
    selector: resourceSelector(),
    required: bool(),
    read: obj(
      {
        labels: matchers(),
        labelsOnProviderOwnedObjects: matchers(),
        annotations: matchers(),
        overrideAnnotations: matchers(),
      },
      [],
      { default: {} },
    ),
    create: obj({ replaceExisting: bool() }),
    autoAdopt: bool(),
    autoDonate: bool(),
    onConflict: obj({ recreateWhenConsumerSideDeleted: bool({ default: true }) }, [], { default: {} }),
    update: obj({
      fields: arrayOf(str()),
      preserving: arrayOf(str()),
      alwaysRecreate: bool(),
      labels: matchers(),
      labelsOnConsumerOwnedObjects: matchers(),
      annotations: matchers(),
      annotationsOnConsumerOwnedObjects: matchers(),
    }),
  };
}

const claimRule = {
  rule: "!(has(self.autoDonate) && self.autoDonate && has(self.autoAdopt) && self.autoAdopt)",
  message: "donate and adopt are mutually exclusive",
};

export const permissionClaim = (): Schema =>
  obj(permissionClaimProperties(), ["resource", "version"], { "x-kubernetes-validations": [claimRule] });

const acceptablePermissionClaim = (): Schema =>
  obj(
    { ...permissionClaimProperties(), state: str({ enum: ["Accepted", "Rejected"] }) },
    ["resource", "state", "version"],
    { "x-kubernetes-validations": [claimRule] },
  );

const localSecretKeyRef = () => ({
  name: str({ minLength: 1 }),
  key: str({ enum: ["kubeconfig"] }),
});

const crdNames = (): Schema =>
  obj(
    {
      plural: str(),
      singular: str(),
      shortNames: arrayOf(str()),
      kind: str(),
      listKind: str(),
      categories: arrayOf(str()),
    },
    ["kind", "plural"],
  );

interface CrdDef {
  group: string;
  kind: string;
  plural: string;
  singular: string;
  shortNames?: string[];
  spec: Schema;
  status: Schema;
  /** Spec is required (most bind kinds mark it so). */
  specRequired?: boolean;
  rootRules?: { rule: string; message: string }[];
  printerColumns?: { name: string; type: string; jsonPath: string; priority?: number }[];
}

function crd(def: CrdDef, labels: Record<string, string>) {
  const root: Schema = {
    type: "object",
    properties: {
      apiVersion: str(),
      kind: str(),
      metadata: { type: "object" },
      spec: def.spec,
      status: def.status,
    },
    ...(def.specRequired === false ? {} : { required: ["spec"] }),
    ...(def.rootRules ? { "x-kubernetes-validations": def.rootRules } : {}),
  };
  return {
    apiVersion: "apiextensions.k8s.io/v1" as const,
    kind: "CustomResourceDefinition" as const,
    metadata: { name: `${def.plural}.${def.group}`, labels },
    spec: {
      group: def.group,
      scope: "Namespaced",
      names: {
        kind: def.kind,
        listKind: `${def.kind}List`,
        plural: def.plural,
        singular: def.singular,
        categories: ["kube-bindings"],
        ...(def.shortNames ? { shortNames: def.shortNames } : {}),
      },
      versions: [
        {
          name: BIND_VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: { openAPIV3Schema: root },
          additionalPrinterColumns: [
            ...(def.printerColumns ?? []),
            { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
          ],
        },
      ],
    },
  };
}

export type BindCrd = ReturnType<typeof crd>;

export function apiServiceExportRequestCrd(labels: Record<string, string> = {}): BindCrd {
  return crd(
    {
      group: BIND_GROUP,
      kind: "APIServiceExportRequest",
      plural: "apiserviceexportrequests",
      singular: "apiserviceexportrequest",
      spec: obj(
        {
          parameters: { ...raw(), ...immutable("parameters") },
          resources: arrayOf(
            obj(
              { ...groupResource(), versions: arrayOf(str()), permissionClaims: arrayOf(permissionClaim()) },
              ["resource"],
            ),
            { minItems: 1, ...immutable("resources") },
          ),
        },
        ["resources"],
      ),
      status: obj(
        {
          phase: str({ default: "Pending", enum: ["Pending", "Failed", "Succeeded"] }),
          terminalMessage: str(),
          conditions: conditions(),
        },
        [],
        { default: {} },
      ),
      printerColumns: [{ name: "Phase", type: "string", jsonPath: ".status.phase" }],
    },
    labels,
  );
}

export function apiServiceExportCrd(labels: Record<string, string> = {}): BindCrd {
  const version = obj(
    {
      name: str({ minLength: 1, pattern: "^v[1-9][0-9]*([a-z]+[1-9][0-9]*)?$" }),
      served: bool({ default: true }),
      storage: bool(),
      deprecated: bool(),
      deprecationWarning: str(),
      schema: obj({ openAPIV3Schema: raw() }, ["openAPIV3Schema"]),
      subresources: obj({
        status: raw(),
        scale: obj({ specReplicasPath: str(), statusReplicasPath: str(), labelSelectorPath: str() }, [
          "specReplicasPath",
          "statusReplicasPath",
        ]),
      }),
      additionalPrinterColumns: arrayOf(
        obj(
          {
            name: str(),
            type: str(),
            format: str(),
            description: str(),
            priority: { type: "integer", format: "int32" },
            jsonPath: str(),
          },
          ["jsonPath", "name", "type"],
        ),
      ),
    },
    ["name", "schema", "served", "storage"],
  );
  return crd(
    {
      group: BIND_GROUP,
      kind: "APIServiceExport",
      plural: "apiserviceexports",
      singular: "apiserviceexport",
      spec: obj(
        {
          group: str(),
          names: crdNames(),
          scope: str({ enum: ["Cluster", "Namespaced"] }),
          versions: arrayOf(version, { minItems: 1 }),
          permissionClaims: arrayOf(permissionClaim()),
          informerScope: str({ enum: ["Cluster", "Namespaced"], ...immutable("informerScope") }),
          clusterScopedIsolation: str({ enum: ["Prefixed", "Namespaced", "None"] }),
        },
        ["group", "informerScope", "names", "scope", "versions"],
        {
          "x-kubernetes-validations": [
            {
              rule: 'self.scope == "Namespaced" || self.informerScope == "Cluster"',
              message: "informerScope must be Cluster for cluster-scoped resources",
            },
            {
              rule: 'self.scope == "Namespaced" || has(self.clusterScopedIsolation)',
              message: "clusterScopedIsolation must be defined for cluster-scoped resources",
            },
            {
              rule: 'self.scope == "Cluster" || !has(self.clusterScopedIsolation)',
              message: "clusterScopedIsolation is not relevant for namespaced resources",
            },
          ],
        },
      ),
      status: obj({ acceptedNames: crdNames(), storedVersions: arrayOf(str()), conditions: conditions() }),
      rootRules: [
        {
          rule: 'self.metadata.name == self.spec.names.plural+"."+self.spec.group',
          message: "the name must be <plural>.<group> of the exported resource",
        },
      ],
    },
    labels,
  );
}

export function apiServiceBindingCrd(labels: Record<string, string> = {}): BindCrd {
  return crd(
    {
      group: BIND_GROUP,
      kind: "APIServiceBinding",
      plural: "apiservicebindings",
      singular: "apiservicebinding",
      shortNames: ["sb"],
      specRequired: false,
      spec: obj(
        {
          kubeconfigSecretRef: obj(
            { ...localSecretKeyRef(), namespace: str({ minLength: 1 }) },
            ["key", "name", "namespace"],
            immutable("kubeconfigSecretRef"),
          ),
          permissionClaims: arrayOf(acceptablePermissionClaim()),
        },
        ["kubeconfigSecretRef"],
      ),
      status: obj({ providerPrettyName: str(), conditions: conditions() }),
      printerColumns: [
        { name: "Provider", type: "string", jsonPath: ".status.providerPrettyName" },
        { name: "Ready", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
      ],
    },
    labels,
  );
}

export function apiServiceNamespaceCrd(labels: Record<string, string> = {}): BindCrd {
  return crd(
    {
      group: BIND_GROUP,
      kind: "APIServiceNamespace",
      plural: "apiservicenamespaces",
      singular: "apiservicenamespace",
      specRequired: false,
      spec: obj({}),
      status: obj({ namespace: str() }),
      printerColumns: [{ name: "Namespace", type: "string", jsonPath: ".status.namespace" }],
    },
    labels,
  );
}

export function clusterBindingCrd(labels: Record<string, string> = {}): BindCrd {
  return crd(
    {
      group: BIND_GROUP,
      kind: "ClusterBinding",
      plural: "clusterbindings",
      singular: "clusterbinding",
      spec: obj(
        {
          kubeconfigSecretRef: obj(localSecretKeyRef(), ["key", "name"], immutable("kubeconfigSecretRef")),
          providerPrettyName: str({ minLength: 1 }),
          serviceProviderSpec: raw(),
        },
        ["kubeconfigSecretRef", "providerPrettyName"],
      ),
      status: obj({
        lastHeartbeatTime: str({ format: "date-time" }),
        heartbeatInterval: str(),
        konnectorVersion: str(),
        conditions: conditions(),
      }),
      rootRules: [
        { rule: 'self.metadata.name == "cluster"', message: "cluster binding name should be cluster" },
      ],
      printerColumns: [
        { name: "Konnector Version", type: "string", jsonPath: ".status.konnectorVersion" },
        { name: "Last Heartbeat", type: "date", jsonPath: ".status.lastHeartbeatTime" },
        { name: "Ready", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
      ],
    },
    labels,
  );
}

export function appClusterBindingCrd(labels: Record<string, string> = {}): BindCrd {
  return crd(
    {
      group: BIND_GROUP,
      kind: "AppClusterBinding",
      plural: "appclusterbindings",
      singular: "appclusterbinding",
      spec: obj(
        {
          kubeconfigSecretRef: obj(
            { ...localSecretKeyRef(), namespace: str({ minLength: 1 }) },
            ["key", "name", "namespace"],
            immutable("kubeconfigSecretRef"),
          ),
          apiExports: arrayOf(obj(groupResource(), ["resource"])),
          konnector: obj({
            deploy: bool(),
            // A strategic-merge patch of the konnector's container (corev1.Container fields).
            overrides: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
          }),
        },
        ["kubeconfigSecretRef"],
      ),
      status: obj({ conditions: conditions() }),
      rootRules: [{ rule: "self.metadata.name == oldSelf.metadata.name", message: "name is immutable" }],
    },
    labels,
  );
}

export function apiServiceExportTemplateCrd(labels: Record<string, string> = {}): BindCrd {
  return crd(
    {
      group: EXAMPLE_BACKEND_GROUP,
      kind: "APIServiceExportTemplate",
      plural: "apiserviceexporttemplates",
      singular: "apiserviceexporttemplate",
      spec: obj(
        {
          APIServiceSelector: obj({ ...groupResource(), version: str({ minLength: 1 }) }, ["resource"]),
          permissionClaims: arrayOf(permissionClaim()),
        },
        ["APIServiceSelector"],
      ),
      status: obj({}),
      printerColumns: [
        {
          name: "Established",
          type: "string",
          jsonPath: '.status.conditions[?(@.type=="Established")].status',
          priority: 5,
        },
      ],
    },
    labels,
  );
}

/** Every bind CRD the control plane needs (the backend's and the example backend's template). */
export function bindCrds(labels: Record<string, string> = {}): BindCrd[] {
  return [
    apiServiceExportRequestCrd(labels),
    apiServiceExportCrd(labels),
    apiServiceBindingCrd(labels),
    apiServiceNamespaceCrd(labels),
    clusterBindingCrd(labels),
    appClusterBindingCrd(labels),
    apiServiceExportTemplateCrd(labels),
  ];
}
