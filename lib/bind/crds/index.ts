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
import { appClusterBindingCrd } from "./app-cluster-binding";
import { clusterBindingCrd } from "./cluster-binding";
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
  appClusterBindingCrd,
  clusterBindingCrd,
};

/** Every bind CRD of a control plane: the backend's six and the example backend's template. */
export function bindCrds(labels: Record<string, string> = {}): CustomResourceDefinition[] {
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
