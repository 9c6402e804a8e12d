/**
 * What a cluster's API server accepts, where the infrastructure fixes it: checked at validation
 * time, so a setting the cluster would refuse later is named before anything is registered.
 */

export interface PortRange {
  from: number;
  to: number;
}

/**
 * kube-apiserver's default `--service-node-port-range`, 30000-32767
 * (k8s.io/kubernetes v1.37.2 pkg/kubeapiserver/options/options.go DefaultServiceNodePortRange:
 * Base 30000, Size 2768). An explicit `nodePort` outside it is refused with "provided port is
 * not in the valid range".
 */
export const KUBERNETES_NODE_PORT_RANGE: PortRange = { from: 30000, to: 32767 };

/**
 * The node-port range of a cluster the project makes or knows, with why; undefined where only
 * the cluster's own API server flags say (an existing cluster, or a Magnum cluster adopted by
 * its kubeconfig, whose template may set another range).
 */
export function knownNodePortRange(cluster: {
  infrastructure: string;
  kubeconfig?: unknown;
}): { range: PortRange; why: string } | undefined {
  switch (cluster.infrastructure) {
    case "local":
      return {
        range: KUBERNETES_NODE_PORT_RANGE,
        why: "the local clusters' API servers keep Kubernetes' default",
      };
    case "aws":
      return { range: KUBERNETES_NODE_PORT_RANGE, why: "EKS fixes Kubernetes' default" };
    case "openstack":
      return cluster.kubeconfig
        ? undefined
        : {
            range: KUBERNETES_NODE_PORT_RANGE,
            why: "the Magnum template this project makes keeps Kubernetes' default",
          };
    default:
      return undefined;
  }
}

export const rangeWithin = (inner: PortRange, outer: PortRange) =>
  inner.from >= outer.from && inner.to <= outer.to;
