/** The bridge's permissions, as RBAC rules. Pure. */

import {
  COMPOSITE_PLURAL,
  CONNECTOR_GROUP,
  NETWORK_PATH_GROUP,
  NETWORK_PATH_PLURAL,
} from "../connector-api/names";
import { RELAYED_OWNERS } from "./readiness-relay";

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
    // Only to annotate a path's composite after its status changed (grouping.ts compositeNudge),
    // and to read it back until it is Ready, for its owner (ownerNudge).
    { apiGroups: [CONNECTOR_GROUP], resources: [COMPOSITE_PLURAL], verbs: ["get", "patch"] },
    // Only to annotate the owner of a connection once it is Ready (grouping.ts RELAYED_OWNERS).
    ...RELAYED_OWNERS.map((o) => ({ apiGroups: [o.group], resources: [o.plural], verbs: ["patch"] })),
    { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
  ];
}

/**
 * The bridge's rights in the data plane's proxy namespace (its `--data-plane-kubeconfig`
 * identity, target kubernetes): the objects a group's TcpProxy is made of (ConfigMap,
 * Deployment, Service, NetworkPolicy: network/proxy/tcp-proxy.ts), and reading what the
 * Kubernetes provider watches while it waits for them. Its await logic subscribes, in the
 * object's own namespace, to deployments, replicasets, pods and persistentvolumeclaims for a
 * Deployment, to services and endpoints for a Service, and to events for its messages
 * (pulumi-kubernetes provider/v4 v4.25.0, pkg/await/deployment.go, service.go, watchers.go;
 * informers/informers.go scopes each factory to the namespace). Where the Service's await is
 * skipped, the ServiceListeners resource (network/proxy/service-listeners.ts) lists the
 * Service's EndpointSlices and the proxy's pods instead. With `kernelHop` (some app cluster's
 * proxy uses it), also the EndpointSlices a KernelPath writes beside its Service
 * (network/proxy/kernel-path.ts). Nothing cluster-wide.
 */
export function dataPlaneRules(
  kernelHop = false,
): { apiGroups: string[]; resources: string[]; verbs: string[] }[] {
  const write = ["get", "list", "watch", "create", "update", "patch", "delete"];
  const read = ["get", "list", "watch"];
  return [
    { apiGroups: [""], resources: ["configmaps", "services"], verbs: write },
    { apiGroups: ["apps"], resources: ["deployments"], verbs: write },
    { apiGroups: ["networking.k8s.io"], resources: ["networkpolicies"], verbs: write },
    { apiGroups: ["apps"], resources: ["replicasets"], verbs: read },
    { apiGroups: [""], resources: ["pods", "endpoints", "persistentvolumeclaims", "events"], verbs: read },
    { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: kernelHop ? write : ["list"] },
  ];
}

/**
 * The data-plane identity's one cluster-wide right, given only where some app cluster's proxy
 * is a NodePort Service: listing nodes, for the node address such a proxy reports to its
 * consumers (lib/bridge/node-host.ts): programs/bridge/data-plane-nodes.ts lists them on each of such a
 * group's runs, and programs/bridge/node-watch.ts every --node-poll seconds while there is one.
 */
export function dataPlaneNodeRules(): { apiGroups: string[]; resources: string[]; verbs: string[] }[] {
  return [{ apiGroups: [""], resources: ["nodes"], verbs: ["list"] }];
}

/**
 * The data-plane identity's cluster-wide reads where some app cluster uses the proxy or
 * WireGuard: the instance Service a path names and its EndpointSlices (`list` by the
 * `kubernetes.io/service-name` label). The kernel hop (network/proxy/instance-backends.ts) gets
 * the Service for its port's name before each such group's run and on each poll; the haproxy
 * hop's and WireGuard's health readers (network/shared/instance-reads.ts) list it by name from
 * the watch cache every health poll, to say at once that an instance has no endpoint; the
 * bridge watches the controller's EndpointSlices (programs/bridge/instance-watch.ts) to read
 * that health as soon as one changes. Instances live in their own namespaces, so these cannot
 * be namespaced; reads only.
 */
export function dataPlaneInstanceRules(): { apiGroups: string[]; resources: string[]; verbs: string[] }[] {
  return [
    { apiGroups: [""], resources: ["services"], verbs: ["get", "list"] },
    { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["list", "watch"] },
  ];
}
