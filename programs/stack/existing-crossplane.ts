import * as k8s from "@kubernetes/client-node";
import type { ServerCheckAnswers, ServerCheckInput } from "../../network/contract/implementation";
import { CROSSPLANE_CORE_SELECTOR, foreignCrossplaneIssues } from "../../lib/crossplane/foreign-crossplane";
import { clientErrorMessage } from "../../lib/kube/client-errors";

/**
 * Asks a control plane handed over by kubeconfig for the Crossplane cores it runs, in every
 * namespace, and refuses the ones this environment did not install (lib/crossplane/
 * foreign-crossplane.ts says why). A list the server refuses (no right to list Deployments
 * everywhere, unreachable) refuses nothing: it is said, and the run goes on to meet what it meets.
 */
export async function existingCrossplaneCheck(
  input: ServerCheckInput,
  version: string,
): Promise<ServerCheckAnswers> {
  const kc = new k8s.KubeConfig();
  kc.loadFromString(input.kubeconfig);
  if (input.context) kc.setCurrentContext(input.context);
  try {
    const list = await kc
      .makeApiClient(k8s.AppsV1Api)
      .listDeploymentForAllNamespaces({ labelSelector: CROSSPLANE_CORE_SELECTOR });
    const issues = foreignCrossplaneIssues(list.items, {
      environment: input.config.environment,
      controlPlane: input.config.controlPlane.name,
      version,
    });
    return { issues, notes: [] };
  } catch (e) {
    const why = clientErrorMessage(e).split("\n")[0];
    return {
      issues: [],
      notes: [
        `could not ask the control plane ${input.config.controlPlane.name} whether it runs a Crossplane already (${why}); going on`,
      ],
    };
  }
}
