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

export interface ComponentStatus {
  pid: number | undefined;
  alive: boolean;
}

/** Progress messages, one per step; the CLI prints them, the library is silent by default. */
export type ProgressLog = (cluster: string, message: string) => void;
