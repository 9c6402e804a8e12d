import { BIND_GROUP, BIND_VERSION, bindNames } from "./names";
import {
  ageColumn,
  obj,
  rootSchema,
  singleVersionCrd,
  str,
  type CustomResourceDefinition,
} from "./schema-builders";

/**
 * APIServiceNamespace: maps a consumer namespace (the object's name) to the provider-side
 * namespace the backend creates for it. The spec is empty by design.
 */
export function apiServiceNamespaceCrd(labels: Record<string, string> = {}): CustomResourceDefinition {
  const status = obj({
    namespace: str({ description: "Provider namespace bound to the consumer namespace of this name." }),
  });
  return singleVersionCrd({
    group: BIND_GROUP,
    version: BIND_VERSION,
    scope: "Namespaced",
    names: bindNames("apiServiceNamespace"),
    // spec has no +required marker in Go, so it may be omitted.
    schema: rootSchema({ spec: obj({}), status, specRequired: false }),
    printerColumns: [{ name: "Namespace", type: "string", jsonPath: ".status.namespace" }, ageColumn],
    labels,
  });
}
