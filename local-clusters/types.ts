import type { NodeInfo, NodeStatus } from "./node/node";

/** The three processes that make up one local cluster, in start order. */
export const COMPONENTS = ["etcd", "kube-apiserver", "kube-controller-manager"] as const;
export type Component = (typeof COMPONENTS)[number];

/** Loopback ports of one cluster, persisted in ports.json so a restart keeps its URLs. */
export interface ClusterPorts {
  etcdClient: number;
  etcdPeer: number;
  apiServer: number;
  controllerManager: number;
}

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

export interface ComponentStatus {
  pid: number | undefined;
  alive: boolean;
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

/** Progress messages, one per step; the CLI prints them, the library is silent by default. */
export type ProgressLog = (cluster: string, message: string) => void;
