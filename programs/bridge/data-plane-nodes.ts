import * as k8s from "@kubernetes/client-node";
import type { NodeLike } from "../../lib/bridge/node-host";

/**
 * Lists the data-service cluster's nodes as the bridge's data-plane identity (its
 * `--data-plane-kubeconfig`), for the host a NodePort proxy reports (lib/bridge/node-host.ts).
 * That identity may list nodes and nothing else cluster-wide (lib/bridge/rbac.ts).
 */
export function dataPlaneNodes(kubeconfig: string): () => Promise<NodeLike[]> {
  const kc = new k8s.KubeConfig();
  kc.loadFromString(kubeconfig);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  return async () => (await core.listNode()).items;
}
