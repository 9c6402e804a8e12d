/**
 * API groups, versions and resource names of klutch-bind (bind/pkg/apis/bind/v1alpha1 and
 * the example backend's bind/contrib/example-backend/apis/examplebackend/v1alpha1).
 * Kept apart from index.ts so the CRD files can import them without an import cycle.
 */

export const BIND_GROUP = "klutch.anynines.com";
export const BIND_VERSION = "v1alpha1";
export const EXAMPLE_BACKEND_GROUP = "example-backend.klutch.anynines.com";
export const EXAMPLE_BACKEND_VERSION = "v1alpha1";

/** Every bind kind lists itself under `kubectl get kube-bindings`. */
export const BIND_CATEGORY = "kube-bindings";

export const BIND_KINDS = {
  apiServiceExportRequest: "APIServiceExportRequest",
  apiServiceExport: "APIServiceExport",
  apiServiceBinding: "APIServiceBinding",
  apiServiceNamespace: "APIServiceNamespace",
  clusterBinding: "ClusterBinding",
  apiServiceExportTemplate: "APIServiceExportTemplate",
} as const;

export type BindKindKey = keyof typeof BIND_KINDS;

export const BIND_PLURALS: Record<BindKindKey, string> = {
  apiServiceExportRequest: "apiserviceexportrequests",
  apiServiceExport: "apiserviceexports",
  apiServiceBinding: "apiservicebindings",
  apiServiceNamespace: "apiservicenamespaces",
  clusterBinding: "clusterbindings",
  apiServiceExportTemplate: "apiserviceexporttemplates",
};

export const BIND_API_VERSION = `${BIND_GROUP}/${BIND_VERSION}`;
export const EXAMPLE_BACKEND_API_VERSION = `${EXAMPLE_BACKEND_GROUP}/${EXAMPLE_BACKEND_VERSION}`;

/** The names block of a bind CRD: singular is the lower-case kind, as controller-gen derives it. */
export function bindNames(key: BindKindKey, shortNames: string[] = []) {
  const kind = BIND_KINDS[key];
  return {
    kind,
    listKind: `${kind}List`,
    plural: BIND_PLURALS[key],
    singular: kind.toLowerCase(),
    ...(shortNames.length > 0 ? { shortNames } : {}),
    categories: [BIND_CATEGORY],
  };
}
