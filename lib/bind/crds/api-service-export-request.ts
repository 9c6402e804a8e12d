import { BIND_GROUP, BIND_VERSION, bindNames } from "./names";
import { groupResourceProperties, permissionClaim } from "./bind-types";
import {
  ageColumn,
  arrayOf,
  conditions,
  freeForm,
  immutable,
  obj,
  readyColumn,
  rootSchema,
  singleVersionCrd,
  str,
  type CustomResourceDefinition,
} from "./schema-builders";

/**
 * APIServiceExportRequest: one binding session of a consumer, asking the provider to export
 * resources. The backend answers by creating APIServiceExports; the request is immutable.
 */
export function apiServiceExportRequestCrd(labels: Record<string, string> = {}): CustomResourceDefinition {
  const spec = obj(
    {
      parameters: freeForm({
        description: "Service provider specific parameters for this binding request.",
        ...immutable("parameters are immutable"),
      }),
      resources: arrayOf(
        obj(
          {
            ...groupResourceProperties(),
            versions: arrayOf(str(), { description: "Versions to export; empty lets the provider choose." }),
            permissionClaims: arrayOf(permissionClaim()),
          },
          ["resource"],
        ),
        { minItems: 1, description: "Resources to export.", ...immutable("resources are immutable") },
      ),
    },
    ["resources"],
  );
  const status = obj(
    {
      phase: str({ enum: ["Pending", "Failed", "Succeeded"], default: "Pending" }),
      terminalMessage: str({ description: "Why the request is in its current phase." }),
      conditions: conditions(),
    },
    [],
    // `+kubebuilder:default={}` on status: a new request reads back as phase Pending.
    { default: {} },
  );
  return singleVersionCrd({
    group: BIND_GROUP,
    version: BIND_VERSION,
    scope: "Namespaced",
    names: bindNames("apiServiceExportRequest"),
    schema: rootSchema({ spec, status, specRequired: true }),
    printerColumns: [readyColumn, ageColumn],
    labels,
  });
}
