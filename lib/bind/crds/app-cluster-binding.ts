import { BIND_GROUP, BIND_VERSION, bindNames } from "./names";
import { clusterKubeconfigSecretRef, groupResource } from "./bind-types";
import { containerOverrides } from "./container-overrides";
import {
  ageColumn,
  arrayOf,
  bool,
  conditions,
  obj,
  readyColumn,
  rootSchema,
  singleVersionCrd,
  type CustomResourceDefinition,
} from "./schema-builders";

/**
 * AppClusterBinding: binds an app cluster from the control plane (no browser login), by
 * the app cluster's kubeconfig Secret; optionally the backend deploys the konnector there.
 * This is the binding mode that suits infrastructure as code.
 */
export function appClusterBindingCrd(labels: Record<string, string> = {}): CustomResourceDefinition {
  const spec = obj(
    {
      kubeconfigSecretRef: clusterKubeconfigSecretRef(),
      apiExports: arrayOf(groupResource(), { description: "APIs (group and resource) to bind." }),
      konnector: obj({
        deploy: bool({ description: "Whether the backend deploys the konnector into the app cluster." }),
        overrides: containerOverrides(),
      }),
    },
    ["kubeconfigSecretRef"],
  );
  return singleVersionCrd({
    group: BIND_GROUP,
    version: BIND_VERSION,
    scope: "Namespaced",
    names: bindNames("appClusterBinding"),
    schema: rootSchema({
      spec,
      status: obj({ conditions: conditions() }),
      specRequired: true,
      rules: [{ rule: "self.metadata.name == oldSelf.metadata.name", message: "name is immutable" }],
    }),
    printerColumns: [readyColumn, ageColumn],
    labels,
  });
}
