/**
 * The API definitions an environment makes on a control plane it did not make (infrastructure
 * `existing`) that are there already and are not its own: refused before anything is registered.
 * Pure; the read is programs/stack/existing-apis.ts.
 *
 * Why: Pulumi's Kubernetes provider creates by server-side apply, and so takes an object of the
 * same name over without a word (lib/existing/foreign-namespaces.ts quotes it). For a
 * CustomResourceDefinition or an XRD that is the worst case: the environment's destroy deletes
 * the definition, and the API server then deletes every object of its kind, the operator's
 * APIServiceExports and bindings of a klutch-bind they installed themselves, say.
 */
import type { ConfigIssue } from "../config/messages";
import type { EnvironmentConfig } from "../config/schema";
import { bindCrds } from "../bind/crds";
import { NETWORK_PATH_CRD_NAME, XRD_NAME } from "../connector-api/names";
import { notOwnedBy } from "./ownership";

export type ApiDefinitionKind = "CustomResourceDefinition" | "CompositeResourceDefinition";

export interface ApiDefinition {
  kind: ApiDefinitionKind;
  name: string;
}

/**
 * The definitions the environment makes on its control plane when that is handed over by
 * kubeconfig: klutch-bind's CRDs (components/bind/bind-backend.ts), the NetworkPath CRD and the
 * connector's XRD (components/connector-api/). None for a control plane it makes.
 */
export function apiDefinitionsOnExistingControlPlane(config: EnvironmentConfig): ApiDefinition[] {
  if (config.controlPlane.infrastructure !== "existing") return [];
  return [
    ...bindCrds(config.bind.version).map((crd) => ({
      kind: "CustomResourceDefinition" as const,
      name: crd.metadata.name,
    })),
    { kind: "CustomResourceDefinition", name: NETWORK_PATH_CRD_NAME },
    { kind: "CompositeResourceDefinition", name: XRD_NAME },
  ];
}

/** The found definitions (those that exist) that are not this environment's own. */
export function foreignApiIssues(
  found: readonly (ApiDefinition & { labels?: Record<string, string> })[],
  o: { environment: string; controlPlane: string },
): ConfigIssue[] {
  return found.flatMap((d) => {
    const why = notOwnedBy(d.labels, o.environment);
    if (why === undefined) return [];
    const message =
      `the control plane ${o.controlPlane} already has ${d.kind} ${d.name}, which environment ${o.environment} did not make (${why}); ` +
      `the environment defines that API itself, and would take the definition over and, on destroy, delete it with every object of its kind: ` +
      `use a control plane where no other klutch-bind or Klutch defines it, or remove that installation first`;
    return [{ path: "klutch:controlPlane.kubeconfig", message }];
  });
}
