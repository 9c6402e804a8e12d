/**
 * The klutch-bind CustomResourceDefinitions, written from the klutchio Go API types
 * (bind/pkg/apis/bind/v1alpha1 and the example backend's APIServiceExportTemplate) and
 * their kubebuilder markers: names, scopes, required fields, enums, patterns, defaults and
 * CEL rules, so the API server validates bind objects as it does with Klutch's own CRDs.
 */
import { apiServiceBindingCrd } from "./api-service-binding";
import { apiServiceExportCrd } from "./api-service-export";
import { apiServiceExportRequestCrd } from "./api-service-export-request";
import { apiServiceExportTemplateCrd } from "./api-service-export-template";
import { apiServiceNamespaceCrd } from "./api-service-namespace";
import { clusterBindingCrd } from "./cluster-binding";
import type { BindRelease } from "../upstream/release";
import { crdForRelease } from "./releases";
import type { CustomResourceDefinition } from "./schema-builders";

export * from "./names";
export type { CustomResourceDefinition, Schema } from "./schema-builders";
export { CLUSTER_BINDING_NAME } from "./cluster-binding";
export {
  apiServiceBindingCrd,
  apiServiceExportCrd,
  apiServiceExportRequestCrd,
  apiServiceExportTemplateCrd,
  apiServiceNamespaceCrd,
  clusterBindingCrd,
};
export { crdForRelease } from "./releases";

/**
 * Every bind CRD of a control plane at a release: the five of bind/deploy/crd and the example
 * backend's template (bind/contrib/deploy/crd), as upstream's install path applies them.
 * AppClusterBinding exists only on main (untagged) and is not installed.
 */
export function bindCrds(
  release: BindRelease,
  labels: Record<string, string> = {},
): CustomResourceDefinition[] {
  return [
    apiServiceExportRequestCrd(labels),
    apiServiceExportCrd(labels),
    apiServiceBindingCrd(labels),
    apiServiceNamespaceCrd(labels),
    clusterBindingCrd(labels),
    apiServiceExportTemplateCrd(labels),
  ].map((crd) => crdForRelease(crd, release));
}

/** The APIServiceBinding CRD of a release, for app clusters (the konnector bootstraps the same). */
export function bindingCrdFor(
  release: BindRelease,
  labels: Record<string, string> = {},
): CustomResourceDefinition {
  return crdForRelease(apiServiceBindingCrd(labels), release);
}
