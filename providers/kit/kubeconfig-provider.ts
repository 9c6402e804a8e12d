import * as fs from "node:fs";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { flattenKubeconfig } from "../../lib/kube/flatten";

/**
 * Reads a kubeconfig file into a Pulumi secret. Reading happens at program time so a
 * changed file (new certificates after the local clusters were recreated) flows into the
 * provider on the next `pulumi up` without touching the resources on the cluster.
 */
export function readKubeconfigSecret(file: string): pulumi.Output<string> {
  // Files it references (a CA, client certificates) are inlined, so nothing downstream loses them.
  return pulumi.secret(flattenKubeconfig(fs.readFileSync(file, "utf8"), file, (f) => fs.readFileSync(f)));
}

export function kubeconfigProvider(
  name: string,
  kubeconfig: pulumi.Input<string>,
  context: pulumi.Input<string> | undefined,
  parent: pulumi.Resource | undefined,
): k8s.Provider {
  return new k8s.Provider(
    name,
    {
      kubeconfig: pulumi.secret(kubeconfig),
      context,
      // Server-side apply lets Crossplane and the konnector co-own fields without fights.
      enableServerSideApply: true,
    },
    { parent },
  );
}
