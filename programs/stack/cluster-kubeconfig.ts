import * as fs from "node:fs";
import * as path from "node:path";
import type * as k8s from "@kubernetes/client-node";
import { kubeConfigFrom } from "../../lib/kube/kubeconfig";

/** The client configuration of a cluster handed over by kubeconfig (its file, relative to the project, and context). */
export function clusterKubeConfig(
  kubeconfig: { path: string; context?: string },
  projectDir: string,
): k8s.KubeConfig {
  return kubeConfigFrom(
    fs.readFileSync(path.resolve(projectDir, kubeconfig.path), "utf8"),
    kubeconfig.context,
  );
}
