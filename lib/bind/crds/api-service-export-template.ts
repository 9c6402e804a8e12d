import { EXAMPLE_BACKEND_GROUP, EXAMPLE_BACKEND_VERSION, bindNames } from "./names";
import { groupResourceProperties, permissionClaim } from "./bind-types";
import {
  ageColumn,
  arrayOf,
  obj,
  rootSchema,
  singleVersionCrd,
  str,
  type CustomResourceDefinition,
} from "./schema-builders";

/**
 * APIServiceExportTemplate (example backend): which provider API is offered for binding,
 * and which further objects (Secrets, ConfigMaps, ...) are synced with it. Note the
 * upper-case `APIServiceSelector` field name: that is its JSON name upstream.
 */
export function apiServiceExportTemplateCrd(labels: Record<string, string> = {}): CustomResourceDefinition {
  const spec = obj(
    {
      APIServiceSelector: obj(
        {
          ...groupResourceProperties(),
          version: str({ minLength: 1, description: "Version to offer; unset lets the backend choose." }),
        },
        ["resource"],
      ),
      permissionClaims: arrayOf(permissionClaim()),
    },
    ["APIServiceSelector"],
  );
  return singleVersionCrd({
    group: EXAMPLE_BACKEND_GROUP,
    version: EXAMPLE_BACKEND_VERSION,
    scope: "Namespaced",
    names: bindNames("apiServiceExportTemplate"),
    // APIServiceExportTemplateStatus is an empty struct.
    schema: rootSchema({ spec, status: obj({}), specRequired: true }),
    printerColumns: [
      {
        name: "Established",
        type: "string",
        jsonPath: '.status.conditions[?(@.type=="Established")].status',
        priority: 5,
      },
      ageColumn,
    ],
    labels,
  });
}
