import * as k8s from "@kubernetes/client-node";
import type { ServerCheckAnswers } from "../../network/contract/implementation";
import type { EnvironmentConfig } from "../../lib/config/schema";
import { foreignNamespaceIssues, namespacesOnExistingClusters } from "../../lib/existing/foreign-namespaces";
import { clientErrorMessage, isNotFound } from "../../lib/kube/client-errors";
import { clusterKubeConfig } from "./cluster-kubeconfig";

/**
 * Asks each cluster handed over by kubeconfig for the namespaces the environment would make
 * there, and refuses the ones that exist and are not the environment's own
 * (lib/existing/foreign-namespaces.ts says why). One `get` a namespace; a cluster that cannot
 * be asked refuses nothing: it is said, and the run goes on.
 */
export async function existingNamespacesCheck(
  config: EnvironmentConfig,
  projectDir: string,
): Promise<ServerCheckAnswers> {
  const answers = await Promise.all(
    namespacesOnExistingClusters(config).map(async (on): Promise<ServerCheckAnswers> => {
      const cluster = [config.controlPlane, ...config.appClusters].find((c) => c.name === on.cluster);
      const kubeconfig = cluster?.kubeconfig;
      if (!kubeconfig) return { issues: [], notes: [] };
      const api = clusterKubeConfig(kubeconfig, projectDir).makeApiClient(k8s.CoreV1Api);
      try {
        const found = await Promise.all(
          on.namespaces.map((name) =>
            api.readNamespace({ name }).then(
              (ns) => ({ name, labels: ns.metadata?.labels ?? {} }),
              (e: unknown) => {
                if (isNotFound(e)) return undefined;
                throw e;
              },
            ),
          ),
        );
        const existing = found.filter((f) => f !== undefined);
        return { issues: foreignNamespaceIssues(existing, on, config.environment), notes: [] };
      } catch (e) {
        const why = clientErrorMessage(e).split("\n")[0];
        return {
          issues: [],
          notes: [
            `could not ask the cluster ${on.cluster} whether its namespaces ${on.namespaces.join(", ")} exist already (${why}); going on`,
          ],
        };
      }
    }),
  );
  return { issues: answers.flatMap((a) => a.issues), notes: answers.flatMap((a) => a.notes) };
}
