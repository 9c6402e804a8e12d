import * as k8s from "@kubernetes/client-node";

/** A client configuration from a kubeconfig's text, on `context` when one is named, else the file's current one. */
export function kubeConfigFrom(text: string, context?: string): k8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  kc.loadFromString(text);
  if (context) kc.setCurrentContext(context);
  return kc;
}
