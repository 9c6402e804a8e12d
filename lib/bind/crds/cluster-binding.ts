import { BIND_GROUP, BIND_VERSION, bindNames } from "./names";
import { localKubeconfigSecretRef } from "./bind-types";
import {
  ageColumn,
  conditions,
  dateTime,
  freeForm,
  obj,
  readyColumn,
  rootSchema,
  singleVersionCrd,
  str,
  type CustomResourceDefinition,
} from "./schema-builders";

/** The singleton name a ClusterBinding must have in its consumer's provider namespace. */
export const CLUSTER_BINDING_NAME = "cluster";

/**
 * ClusterBinding: one bound consumer as seen by the provider, in the consumer's namespace on
 * the control plane; a singleton named "cluster". The konnector heartbeats in its status.
 */
export function clusterBindingCrd(labels: Record<string, string> = {}): CustomResourceDefinition {
  const spec = obj(
    {
      kubeconfigSecretRef: localKubeconfigSecretRef(),
      providerPrettyName: str({ minLength: 1, description: "Pretty name of the service provider." }),
      serviceProviderSpec: freeForm({
        description: "Provider specific data about the bound service (region, tier, ...).",
      }),
    },
    ["kubeconfigSecretRef", "providerPrettyName"],
  );
  const status = obj({
    lastHeartbeatTime: dateTime({ description: "Last time the konnector updated the status." }),
    // metav1.Duration is a Go duration string such as "30s" or "1m0s"; upstream leaves it unchecked.
    heartbeatInterval: str({ description: "Longest interval between heartbeats the konnector promises." }),
    konnectorVersion: str(),
    conditions: conditions(),
  });
  return singleVersionCrd({
    group: BIND_GROUP,
    version: BIND_VERSION,
    scope: "Namespaced",
    names: bindNames("clusterBinding"),
    schema: rootSchema({
      spec,
      status,
      specRequired: true,
      rules: [
        {
          rule: `self.metadata.name == "${CLUSTER_BINDING_NAME}"`,
          message: "cluster binding name should be cluster",
        },
      ],
    }),
    printerColumns: [
      { name: "Konnector Version", type: "string", jsonPath: ".status.konnectorVersion" },
      { name: "Last Heartbeat", type: "date", jsonPath: ".status.lastHeartbeatTime" },
      readyColumn,
      ageColumn,
    ],
    labels,
  });
}
