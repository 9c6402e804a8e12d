import * as k8s from "@kubernetes/client-node";
import type { ServerCheckAnswers } from "../../network/contract/implementation";
import type { EnvironmentConfig } from "../../lib/config/schema";
import {
  type ApiDefinition,
  apiDefinitionsOnExistingControlPlane,
  foreignApiIssues,
} from "../../lib/existing/foreign-apis";
import { clientErrorMessage, isNotFound } from "../../lib/kube/client-errors";
import { clusterKubeConfig } from "./cluster-kubeconfig";

/**
 * Asks a control plane handed over by kubeconfig for the API definitions the environment would
 * make there, and refuses the ones that exist and are not the environment's own
 * (lib/existing/foreign-apis.ts says why). One `get` a definition: the CRDs of a cluster can be
 * many and large, and only these names matter. An XRD's kind that is not served (no Crossplane
 * yet) is no XRD. A control plane that cannot be asked refuses nothing: it is said.
 */
export async function existingApisCheck(
  config: EnvironmentConfig,
  projectDir: string,
): Promise<ServerCheckAnswers> {
  const planned = apiDefinitionsOnExistingControlPlane(config);
  const kubeconfig = config.controlPlane.kubeconfig;
  if (planned.length === 0 || !kubeconfig) return { issues: [], notes: [] };
  const kc = clusterKubeConfig(kubeconfig, projectDir);
  const crds = kc.makeApiClient(k8s.ApiextensionsV1Api);
  const objects = kc.makeApiClient(k8s.CustomObjectsApi);
  const read = (d: ApiDefinition): Promise<{ metadata?: k8s.V1ObjectMeta }> =>
    d.kind === "CustomResourceDefinition"
      ? crds.readCustomResourceDefinition({ name: d.name })
      : (objects.getClusterCustomObject({
          group: "apiextensions.crossplane.io",
          version: "v1",
          plural: "compositeresourcedefinitions",
          name: d.name,
        }) as Promise<{ metadata?: k8s.V1ObjectMeta }>);
  try {
    const found = await Promise.all(
      planned.map((d) =>
        read(d).then(
          (o) => ({ ...d, labels: o.metadata?.labels ?? {} }),
          (e: unknown) => {
            if (isNotFound(e)) return undefined;
            throw e;
          },
        ),
      ),
    );
    const existing = found.filter((f) => f !== undefined);
    return {
      issues: foreignApiIssues(existing, {
        environment: config.environment,
        controlPlane: config.controlPlane.name,
      }),
      notes: [],
    };
  } catch (e) {
    const why = clientErrorMessage(e).split("\n")[0];
    return {
      issues: [],
      notes: [
        `could not ask the control plane ${config.controlPlane.name} whether it defines ${planned.map((d) => d.name).join(", ")} already (${why}); going on`,
      ],
    };
  }
}
