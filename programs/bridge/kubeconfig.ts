import * as k8s from "@kubernetes/client-node";

/**
 * Where the bridge finds the control plane: `--kubeconfig`, else the KUBECONFIG variable
 * (outside a cluster, like kubectl), else the in-cluster config a pod has: the API server at
 * KUBERNETES_SERVICE_HOST/PORT, which the kubelet sets in every container, and the pod's
 * ServiceAccount token and CA under /var/run/secrets/kubernetes.io/serviceaccount
 * (@kubernetes/client-node 2.0.1, KubeConfig.loadFromCluster). Returns the kubeconfig file, or
 * undefined for in-cluster config.
 */
export function controlPlaneKubeconfig(flag: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  if (flag) return flag;
  // client-node reads only the first file of a path list; kubectl merges them, we refuse to guess.
  if (env.KUBECONFIG) {
    if (env.KUBECONFIG.includes(":"))
      throw new Error(`KUBECONFIG "${env.KUBECONFIG}" lists several files: pass one with --kubeconfig`);
    return env.KUBECONFIG;
  }
  if (env.KUBERNETES_SERVICE_HOST && env.KUBERNETES_SERVICE_PORT) return undefined;
  throw new Error(
    "no control plane: pass --kubeconfig or set KUBECONFIG (in a pod the in-cluster config is used)",
  );
}

/** The client config for a file from controlPlaneKubeconfig, or in-cluster config for undefined. */
export function loadKubeConfig(file: string | undefined): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  if (file === undefined) kc.loadFromCluster();
  else kc.loadFromFile(file);
  return kc;
}
