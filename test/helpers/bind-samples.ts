import { BIND_API_VERSION, EXAMPLE_BACKEND_API_VERSION, type BindKindKey } from "../../lib/bind/crds";

/**
 * Bind objects for the CRD tests (unit and e2e): valid ones as Klutch documents or creates
 * them, and invalid ones, each with the field the API server must name when it refuses it.
 */

export interface BindSample {
  title: string;
  kind: BindKindKey;
  object: Record<string, any>;
}

export interface InvalidBindSample extends BindSample {
  /** The field path the refusal names. */
  field: string;
  /** How it is refused: by the OpenAPI schema, or by a CEL rule (only a real API server evaluates those). */
  by: "schema" | "cel";
  /** For CEL rules: the rule's message. */
  message?: string;
}

/** Namespaces the samples live in (the e2e test creates them). */
export const SAMPLE_NAMESPACES = ["crossplane-system", "kube-bind-consumer-1", "klutch-bind", "klutch-apps"];

/** Seed 004: the servicebindings API exported with claims on Secrets and ConfigMaps. */
export function seedServiceBindingsTemplate(): Record<string, any> {
  return {
    kind: "APIServiceExportTemplate",
    apiVersion: EXAMPLE_BACKEND_API_VERSION,
    metadata: { name: "servicebindings", namespace: "crossplane-system" },
    spec: {
      APIServiceSelector: { resource: "servicebindings", group: "anynines.com" },
      permissionClaims: [
        { group: "", resource: "secrets", version: "v1", selector: { owner: "Provider" } },
        { group: "", resource: "configmaps", version: "v1", selector: { owner: "Provider" } },
      ],
    },
  };
}

function exportRequest(): Record<string, any> {
  return {
    apiVersion: BIND_API_VERSION,
    kind: "APIServiceExportRequest",
    metadata: { name: "servicebindings-request", namespace: "kube-bind-consumer-1" },
    spec: {
      parameters: { region: "eu-central-1", tier: { size: "small" } },
      resources: [
        {
          group: "anynines.com",
          resource: "servicebindings",
          versions: ["v1"],
          permissionClaims: [
            { group: "", resource: "secrets", version: "v1", selector: { owner: "Provider" } },
          ],
        },
      ],
    },
  };
}

function serviceExport(): Record<string, any> {
  return {
    apiVersion: BIND_API_VERSION,
    kind: "APIServiceExport",
    metadata: { name: "servicebindings.anynines.com", namespace: "kube-bind-consumer-1" },
    spec: {
      group: "anynines.com",
      names: {
        kind: "ServiceBinding",
        listKind: "ServiceBindingList",
        plural: "servicebindings",
        singular: "servicebinding",
      },
      scope: "Namespaced",
      informerScope: "Namespaced",
      versions: [
        {
          name: "v1",
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: "object",
              properties: { spec: { type: "object", properties: { instanceRef: { type: "string" } } } },
            },
          },
          subresources: { status: {} },
          additionalPrinterColumns: [{ name: "Instance", type: "string", jsonPath: ".spec.instanceRef" }],
        },
      ],
      permissionClaims: [{ group: "", resource: "secrets", version: "v1", required: true }],
    },
  };
}

function binding(): Record<string, any> {
  return {
    apiVersion: BIND_API_VERSION,
    kind: "APIServiceBinding",
    metadata: { name: "servicebindings.anynines.com", namespace: "klutch-bind" },
    spec: {
      kubeconfigSecretRef: { name: "kubeconfig-abcde", namespace: "klutch-bind", key: "kubeconfig" },
      permissionClaims: [
        { group: "", resource: "secrets", version: "v1", state: "Accepted", selector: { owner: "Provider" } },
        { group: "", resource: "configmaps", version: "v1", state: "Rejected" },
      ],
    },
  };
}

function clusterBinding(): Record<string, any> {
  return {
    apiVersion: BIND_API_VERSION,
    kind: "ClusterBinding",
    metadata: { name: "cluster", namespace: "kube-bind-consumer-1" },
    spec: {
      kubeconfigSecretRef: { name: "kubeconfig", key: "kubeconfig" },
      providerPrettyName: "Klutch control plane",
      serviceProviderSpec: { region: "eu-central-1", plans: ["small", "medium"] },
    },
  };
}

function appClusterBinding(): Record<string, any> {
  return {
    apiVersion: BIND_API_VERSION,
    kind: "AppClusterBinding",
    metadata: { name: "app-1", namespace: "klutch-apps" },
    spec: {
      kubeconfigSecretRef: { name: "app-1-kubeconfig", namespace: "klutch-apps", key: "kubeconfig" },
      apiExports: [
        { group: "anynines.com", resource: "postgresqlinstances" },
        { group: "anynines.com", resource: "servicebindings" },
      ],
      konnector: {
        deploy: true,
        overrides: {
          image: "public.ecr.aws/w5n9a2g2/klutch/konnector:v1.5.0",
          args: ["--lease-namespace=klutch-bind"],
          env: [
            { name: "LOG_LEVEL", value: "2" },
            { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
          ],
          ports: [{ containerPort: 8080, name: "healthz" }],
          resources: { limits: { cpu: "500m", memory: "256Mi" }, requests: { cpu: 1, memory: "64Mi" } },
          readinessProbe: { httpGet: { path: "/healthz", port: 8080 }, periodSeconds: 10 },
          livenessProbe: { httpGet: { path: "/healthz", port: "healthz" } },
          securityContext: {
            runAsNonRoot: true,
            allowPrivilegeEscalation: false,
            capabilities: { drop: ["ALL"] },
            seccompProfile: { type: "RuntimeDefault" },
          },
        },
      },
    },
  };
}

export function validSamples(): BindSample[] {
  const seedWithVersion = seedServiceBindingsTemplate();
  seedWithVersion.metadata.name = "postgresqlinstances";
  seedWithVersion.spec = {
    APIServiceSelector: { group: "anynines.com", resource: "postgresqlinstances", version: "v1" },
  };
  return [
    {
      title: "the seed's servicebindings template",
      kind: "apiServiceExportTemplate",
      object: seedServiceBindingsTemplate(),
    },
    {
      title: "a template with a version and no claims",
      kind: "apiServiceExportTemplate",
      object: seedWithVersion,
    },
    { title: "an APIServiceExportRequest", kind: "apiServiceExportRequest", object: exportRequest() },
    { title: "an APIServiceExport", kind: "apiServiceExport", object: serviceExport() },
    { title: "an APIServiceBinding", kind: "apiServiceBinding", object: binding() },
    {
      title: "an APIServiceNamespace",
      kind: "apiServiceNamespace",
      object: {
        apiVersion: BIND_API_VERSION,
        kind: "APIServiceNamespace",
        metadata: { name: "default", namespace: "kube-bind-consumer-1" },
        spec: {},
      },
    },
    { title: "a ClusterBinding", kind: "clusterBinding", object: clusterBinding() },
    {
      title: "an AppClusterBinding with konnector overrides",
      kind: "appClusterBinding",
      object: appClusterBinding(),
    },
  ];
}

/** A copy of `object` with `edit` applied, renamed so every invalid sample is its own object. */
function variant(base: Record<string, any>, name: string, edit: (o: Record<string, any>) => void) {
  const copy = structuredClone(base);
  copy.metadata.name = name;
  edit(copy);
  return copy;
}

export function invalidSamples(): InvalidBindSample[] {
  const template = seedServiceBindingsTemplate();
  return [
    {
      title: "a template without APIServiceSelector",
      kind: "apiServiceExportTemplate",
      object: variant(template, "no-selector", (o) => delete o.spec.APIServiceSelector),
      field: "spec.APIServiceSelector",
      by: "schema",
    },
    {
      title: "a template whose selector is spelt apiServiceSelector",
      kind: "apiServiceExportTemplate",
      object: variant(template, "lower-case-selector", (o) => {
        o.spec.apiServiceSelector = o.spec.APIServiceSelector;
        delete o.spec.APIServiceSelector;
      }),
      field: "spec.apiServiceSelector",
      by: "schema",
    },
    {
      title: "a template claim with an unknown owner",
      kind: "apiServiceExportTemplate",
      object: variant(template, "bad-owner", (o) => (o.spec.permissionClaims[1].selector.owner = "Everyone")),
      field: "spec.permissionClaims[1].selector.owner",
      by: "schema",
    },
    {
      title: "a template claim without a version",
      kind: "apiServiceExportTemplate",
      object: variant(template, "claim-without-version", (o) => delete o.spec.permissionClaims[0].version),
      field: "spec.permissionClaims[0].version",
      by: "schema",
    },
    {
      title: "a template selecting a capitalised resource",
      kind: "apiServiceExportTemplate",
      object: variant(
        template,
        "capital-resource",
        (o) => (o.spec.APIServiceSelector.resource = "ServiceBindings"),
      ),
      field: "spec.APIServiceSelector.resource",
      by: "schema",
    },
    {
      title: "a template claim both donating and adopting",
      kind: "apiServiceExportTemplate",
      object: variant(template, "donate-and-adopt", (o) =>
        Object.assign(o.spec.permissionClaims[0], { autoAdopt: true, autoDonate: true }),
      ),
      field: "spec.permissionClaims[0]",
      by: "cel",
      message: "donate and adopt are mutually exclusive",
    },
    {
      title: "a request for no resources",
      kind: "apiServiceExportRequest",
      object: variant(exportRequest(), "empty-request", (o) => (o.spec.resources = [])),
      field: "spec.resources",
      by: "schema",
    },
    {
      title: "a request with an upper-case group",
      kind: "apiServiceExportRequest",
      object: variant(
        exportRequest(),
        "upper-case-group",
        (o) => (o.spec.resources[0].group = "Anynines.com"),
      ),
      field: "spec.resources[0].group",
      by: "schema",
    },
    {
      title: "an export of version 1.0",
      kind: "apiServiceExport",
      object: variant(
        serviceExport(),
        "servicebindings.anynines.com",
        (o) => (o.spec.versions[0].name = "1.0"),
      ),
      field: "spec.versions[0].name",
      by: "schema",
    },
    {
      title: "an export whose name is not <plural>.<group>",
      kind: "apiServiceExport",
      object: variant(serviceExport(), "servicebindings", () => undefined),
      field: "<nil>",
      by: "cel",
      message: "metadata.name must be <spec.names.plural>.<spec.group>",
    },
    {
      title: "a cluster-scoped export watched per namespace",
      kind: "apiServiceExport",
      object: variant(serviceExport(), "servicebindings.anynines.com", (o) =>
        Object.assign(o.spec, { scope: "Cluster", clusterScopedIsolation: "Prefixed" }),
      ),
      field: "spec",
      by: "cel",
      message: "informerScope must be Cluster for cluster-scoped resources",
    },
    {
      title: "a binding whose secret key is not kubeconfig",
      kind: "apiServiceBinding",
      object: variant(binding(), "bad-key", (o) => (o.spec.kubeconfigSecretRef.key = "config")),
      field: "spec.kubeconfigSecretRef.key",
      by: "schema",
    },
    {
      title: "a binding claim with an undecided state",
      kind: "apiServiceBinding",
      object: variant(binding(), "undecided", (o) => (o.spec.permissionClaims[1].state = "Maybe")),
      field: "spec.permissionClaims[1].state",
      by: "schema",
    },
    {
      title: "a binding with an empty secret namespace",
      kind: "apiServiceBinding",
      object: variant(binding(), "no-secret-namespace", (o) => (o.spec.kubeconfigSecretRef.namespace = "")),
      field: "spec.kubeconfigSecretRef.namespace",
      by: "schema",
    },
    {
      title: "a cluster binding without a provider name",
      kind: "clusterBinding",
      object: variant(clusterBinding(), "cluster", (o) => delete o.spec.providerPrettyName),
      field: "spec.providerPrettyName",
      by: "schema",
    },
    {
      title: "a cluster binding not named cluster",
      kind: "clusterBinding",
      object: variant(clusterBinding(), "not-cluster", () => undefined),
      field: "<nil>",
      by: "cel",
      message: "cluster binding name should be cluster",
    },
    {
      title: "an app cluster binding with a named container port",
      kind: "appClusterBinding",
      object: variant(
        appClusterBinding(),
        "named-port",
        (o) => (o.spec.konnector.overrides.ports[0].containerPort = "http"),
      ),
      field: "spec.konnector.overrides.ports[0].containerPort",
      by: "schema",
    },
    {
      title: "an app cluster binding with a CPU limit that is no quantity",
      kind: "appClusterBinding",
      object: variant(
        appClusterBinding(),
        "bad-quantity",
        (o) => (o.spec.konnector.overrides.resources.limits.cpu = "lots"),
      ),
      field: "spec.konnector.overrides.resources.limits.cpu",
      by: "schema",
    },
    {
      // Pods take `cpu: 0.5` (a typed Quantity); a CRD's int-or-string field takes no fractions.
      title: "an app cluster binding with a fractional number as CPU request",
      kind: "appClusterBinding",
      object: variant(
        appClusterBinding(),
        "float-quantity",
        (o) => (o.spec.konnector.overrides.resources.requests.cpu = 0.5),
      ),
      field: "spec.konnector.overrides.resources.requests.cpu",
      by: "schema",
    },
    {
      title: "an app cluster binding with a misspelt override",
      kind: "appClusterBinding",
      object: variant(
        appClusterBinding(),
        "misspelt-override",
        (o) => (o.spec.konnector.overrides.imagePullPolicyy = "Always"),
      ),
      field: "spec.konnector.overrides.imagePullPolicyy",
      by: "schema",
    },
    {
      title: "an app cluster binding without a kubeconfig secret",
      kind: "appClusterBinding",
      object: variant(appClusterBinding(), "no-secret", (o) => delete o.spec.kubeconfigSecretRef),
      field: "spec.kubeconfigSecretRef",
      by: "schema",
    },
  ];
}
