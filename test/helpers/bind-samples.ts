import type { BindRelease } from "../../lib/bind/upstream/release";
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
  /** Releases whose CRDs refuse it; all when omitted. */
  releases?: BindRelease[];
}

/** The invalid samples a release's CRDs refuse. */
export function invalidSamplesOf(release: BindRelease): InvalidBindSample[] {
  return invalidSamples().filter((s) => !s.releases || s.releases.includes(release));
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
      // controller-gen v0.10 (v1.4.0) did not mark it required.
      releases: ["v1.5.0"],
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
      // Upstream's marker reuses this message for the name rule; the CRD keeps it as released.
      message: "informerScope is immutable",
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
  ];
}
