/**
 * A Crossplane this environment did not install, found on a control plane handed over by
 * kubeconfig (infrastructure `existing`): refused before anything is registered. The environment
 * installs its own core with Crossplane's chart into `crossplane-system`; applied over another
 * install it would take that one's objects over by server-side apply (and its pods' flags,
 * version and packages with them), which its owner never agreed to. Pure; the read is
 * programs/stack/existing-crossplane.ts.
 *
 * What is looked for: Deployments labelled `app=crossplane`, the label Crossplane's chart gives
 * its core's Deployment and uses as its selector (cluster/charts/crossplane/templates/
 * deployment.yaml at 1.20.11 and 2.4.0), in any namespace. One that carries this environment's
 * label was installed by it (the chart's customLabels, components/crossplane/crossplane.ts) and
 * is the upgrade guard's to judge (providers/dynamic/crossplane-upgrade-guard.ts).
 */
import { imageCrossplaneVersion } from "../config/crossplane-versions";
import type { ConfigIssue } from "../config/messages";
import { ENVIRONMENT_LABEL } from "../environment-plan";

/** The chart's selector label of Crossplane core's Deployment. */
export const CROSSPLANE_CORE_SELECTOR = "app=crossplane";

export interface DeploymentLike {
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
  spec?: { template?: { spec?: { containers?: { name?: string; image?: string; args?: string[] }[] } } };
}

export interface ForeignCrossplaneInput {
  environment: string;
  controlPlane: string;
  /** The version this environment would install. */
  version: string;
}

/** One issue per Crossplane core on the control plane that this environment did not install. */
export function foreignCrossplaneIssues(
  deployments: readonly DeploymentLike[],
  o: ForeignCrossplaneInput,
): ConfigIssue[] {
  return deployments
    .filter((d) => d.metadata?.labels?.[ENVIRONMENT_LABEL] !== o.environment)
    .map((d) => {
      const where = `${d.metadata?.namespace ?? "?"}/${d.metadata?.name ?? "?"}`;
      const image = coreContainer(d)?.image;
      const version = image ? imageCrossplaneVersion(image) : undefined;
      const owner = d.metadata?.labels?.[ENVIRONMENT_LABEL];
      const runs = version
        ? `Crossplane ${version}`
        : `a Crossplane of unknown version (image ${image ?? "none"})`;
      return {
        path: "klutch:controlPlane.kubeconfig",
        message:
          `the control plane ${o.controlPlane} already runs ${runs} as Deployment ${where}, which environment ${o.environment} did not install ` +
          `(${owner ? `it belongs to environment ${owner}` : `it has no label ${ENVIRONMENT_LABEL}=${o.environment}`}); ` +
          `this environment installs Crossplane ${o.version} itself and does not take over one it did not make: ` +
          `remove that Crossplane (\`helm uninstall <release> -n ${d.metadata?.namespace ?? "<namespace>"}\` where Helm installed it), hand over a control plane without one, ` +
          `or run Klutch on it with crossplane.useInstalled set to true (docs/existing-clusters.md)`,
      };
    });
}

/** Core's container of a Crossplane Deployment: the one the chart names `crossplane`, else the first. */
export function coreContainer(d: DeploymentLike) {
  const containers = d.spec?.template?.spec?.containers ?? [];
  return containers.find((c) => c.name === "crossplane") ?? containers[0];
}
