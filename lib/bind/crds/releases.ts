import type { BindRelease } from "../upstream/release";
import type { CustomResourceDefinition, Schema } from "./schema-builders";

/**
 * How the CRDs of a klutch-bind release differ from what the builders produce, which is the
 * v1.5.0 form (controller-gen v0.19). Compared structurally (descriptions aside) against
 * bind/deploy/crd/*.yaml and bind/contrib/deploy/crd/*.yaml at each tag; at v1.4.0
 * (controller-gen v0.10) these are the only differences:
 *  - no `default: {}` on a permission claim's selector, read and onConflict objects;
 *  - APIServiceExport.spec requires only informerScope, and its names lists carry no
 *    `x-kubernetes-list-type: atomic`;
 *  - APIServiceExportTemplate.spec has no required APIServiceSelector.
 * The konnector rewrites the APIServiceBinding CRD at start, so a mismatch there would be a
 * fight on every start; the others the backend only reads.
 */
export function crdForRelease(crd: CustomResourceDefinition, release: BindRelease): CustomResourceDefinition {
  if (release === "v1.5.0") return crd;
  const copy = JSON.parse(JSON.stringify(crd)) as CustomResourceDefinition;
  const root = copy.spec.versions[0]?.schema.openAPIV3Schema;
  if (!root) return copy;
  walk(root, (node) => {
    const claim = node.properties?.permissionClaims?.items?.properties;
    if (claim) for (const key of ["selector", "read", "onConflict"]) delete claim[key]?.default;
  });
  const spec = root.properties?.spec;
  if (copy.spec.names.kind === "APIServiceExport" && spec) {
    spec.required = ["informerScope"];
    const lists = [spec.properties?.names, root.properties?.status?.properties?.acceptedNames];
    for (const names of lists) {
      for (const key of ["shortNames", "categories"])
        delete names?.properties?.[key]?.["x-kubernetes-list-type"];
    }
  }
  if (copy.spec.names.kind === "APIServiceExportTemplate" && spec) delete spec.required;
  return copy;
}

function walk(node: Schema, visit: (n: Schema) => void): void {
  visit(node);
  for (const child of Object.values(node.properties ?? {})) walk(child, visit);
  if (node.items) walk(node.items, visit);
  if (node.additionalProperties && typeof node.additionalProperties === "object")
    walk(node.additionalProperties, visit);
}
