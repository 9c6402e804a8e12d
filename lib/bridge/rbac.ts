/** The bridge's permissions, as RBAC rules. Pure. */

import { CONNECTOR_GROUP } from "../../network/connector-api/xrd";
import { NETWORK_PATH_GROUP, NETWORK_PATH_PLURAL } from "./api";
import { COMPOSITE_PLURAL } from "./grouping";

/**
 * The bridge's own permissions on the control plane: NetworkPaths (read, finalizers) and
 * their status, and events. It touches nothing else there; what it builds lives in the
 * data plane, through the data plane's own credentials.
 */
/**
 * The bridge's rights in its own namespace: read the environment's settings ConfigMap, and
 * hold the leader Lease. RBAC cannot limit `create` by name, so creating leases is granted
 * namespace-wide; reading and renewing only the one Lease.
 */
export function bridgeNamespaceRules(
  settingsConfigMap: string,
  lease: string,
): { apiGroups: string[]; resources: string[]; resourceNames?: string[]; verbs: string[] }[] {
  return [
    { apiGroups: [""], resources: ["configmaps"], resourceNames: [settingsConfigMap], verbs: ["get"] },
    { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["create"] },
    {
      apiGroups: ["coordination.k8s.io"],
      resources: ["leases"],
      resourceNames: [lease],
      verbs: ["get", "update"],
    },
  ];
}

export function bridgeRules(): { apiGroups: string[]; resources: string[]; verbs: string[] }[] {
  return [
    {
      apiGroups: [NETWORK_PATH_GROUP],
      resources: [NETWORK_PATH_PLURAL],
      verbs: ["get", "list", "watch", "patch", "update"],
    },
    {
      apiGroups: [NETWORK_PATH_GROUP],
      resources: [`${NETWORK_PATH_PLURAL}/status`],
      verbs: ["get", "patch", "update"],
    },
    // Only to annotate a path's composite after its status changed (grouping.ts compositeNudge).
    { apiGroups: [CONNECTOR_GROUP], resources: [COMPOSITE_PLURAL], verbs: ["patch"] },
    { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
  ];
}
