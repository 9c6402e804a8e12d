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
 * provider's permission claims. Cluster-scoped at v1.4.0 and v1.5.0 (it became namespaced on
 * main, untagged). The konnector writes its own copy of this CRD at every start
 * (bind/deploy/crd/bootstrap.go), so ours must equal the release's, field for field.
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
    scope: "Cluster",
    names: bindNames("apiServiceBinding", ["sb"]),
    // spec carries no +required marker in Go (the package default is optional).
    schema: rootSchema({ spec, status, specRequired: false }),
    printerColumns: [
      { name: "Provider", type: "string", jsonPath: ".status.providerPrettyName" },
      // Upstream's marker mis-escapes this annotation key (it means bind.klutch.anynines.com/
      // resources). Kept as released: the konnector writes this CRD back at every start.
      {
        name: "Resources",
        type: "string",
        jsonPath: ".metadata.annotations.bind\\.klutch.\\anynines\\.com/resources",
        priority: 1,
      },
      readyColumn,
      { name: "Message", type: "string", jsonPath: '.status.conditions[?(@.type=="Ready")].message' },
      ageColumn,
    ],
    labels,
  });
}
