import type { Component, ComponentStatus, ClusterPorts } from "./host/types";
import type { NodeInfo, NodeStatus } from "./node/node";

/** What `up` reports for each cluster. */
export interface ClusterInfo {
  name: string;
  apiServerUrl: string;
  kubeconfig: string;
  ports: ClusterPorts;
  /** false when the cluster was already healthy and left alone. */
  started: boolean;
  /** Seconds from starting kube-apiserver until /readyz said ok (0 when not started). */
  apiServerReadySeconds: number;
  pids: Record<Component, number>;
  /** The cluster's node, when it asked for one. */
  node?: NodeInfo;
}

/** What `status` reports for each cluster found under the state dir. */
export interface ClusterStatus {
  name: string;
  apiServerUrl: string | undefined;
  kubeconfig: string;
  components: Record<Component, ComponentStatus>;
  /** The body of GET /readyz ("ok"), or why it could not be read. */
  readyz: string;
  healthy: boolean;
  /** The cluster's node, when it has (or had) one. */
  node?: NodeStatus;
}
