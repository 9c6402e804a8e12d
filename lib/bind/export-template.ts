import type { ExportedApiConfig } from "../config/schema";
import { exportTemplateName } from "./backend-plan";

export const EXPORT_TEMPLATE_API_VERSION = "example-backend.klutch.anynines.com/v1alpha1";
export const EXPORT_TEMPLATE_KIND = "APIServiceExportTemplate";

/**
 * The APIServiceExportTemplate of one exported API, in the form Klutch documents (seed
 * 004): `spec.APIServiceSelector` names the resource, `spec.permissionClaims` the objects
 * synced with it. The namespace is set by the caller.
 */
export function exportTemplateManifest(api: ExportedApiConfig, labels: Record<string, string> = {}) {
  return {
    apiVersion: EXPORT_TEMPLATE_API_VERSION,
    kind: EXPORT_TEMPLATE_KIND,
    metadata: { name: exportTemplateName(api), labels },
    spec: {
      APIServiceSelector: { group: api.group, resource: api.resource, version: api.version },
      permissionClaims: api.permissionClaims.map((claim) => ({
        group: claim.group,
        resource: claim.resource,
        version: claim.version,
        ...(claim.selector ? { selector: { owner: claim.selector.owner } } : {}),
      })),
    },
  };
}
