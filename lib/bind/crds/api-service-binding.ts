import { BIND_GROUP, BIND_VERSION, bindNames } from "./names";
import { acceptablePermissionClaim, clusterKubeconfigSecretRef } from "./bind-types";
import {
  ageColumn,
  arrayOf,
  conditions,
  obj,
  readyColumn,
  rootSchema,
  singleVersionCrd,
  str,
  type CustomResourceDefinition,
} from "./schema-builders";

/**
 * APIServiceBinding: lives in the consumer (app) cluster and binds one exported API there,
 * through the kubeconfig Secret of the provider, with the consumer's decisions on the
 * provider's permission claims.
 */
export function apiServiceBindingCrd(labels: Record<string, string> = {}): CustomResourceDefinition {
  const spec = obj(
    {
      kubeconfigSecretRef: clusterKubeconfigSecretRef(),
      permissionClaims: arrayOf(acceptablePermissionClaim()),
    },
    ["kubeconfigSecretRef"],
  );
  const status = obj({
    providerPrettyName: str({ description: "Pretty name of the service provider." }),
    conditions: conditions(),
  });
  return singleVersionCrd({
    group: BIND_GROUP,
    version: BIND_VERSION,
    scope: "Namespaced",
    names: bindNames("apiServiceBinding", ["sb"]),
    // spec carries no +required marker in Go (the package default is optional).
    schema: rootSchema({ spec, status, specRequired: false }),
    printerColumns: [
      { name: "Provider", type: "string", jsonPath: ".status.providerPrettyName" },
      // Upstream's marker mis-escapes this annotation key (`bind\.klutch.\anynines\.com`);
      // this is the key it means.
      {
        name: "Resources",
        type: "string",
        jsonPath: ".metadata.annotations.bind\\.klutch\\.anynines\\.com/resources",
        priority: 1,
      },
      readyColumn,
      { name: "Message", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].message' },
      ageColumn,
    ],
    labels,
  });
}
