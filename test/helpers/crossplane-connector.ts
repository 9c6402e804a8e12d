import { CROSSPLANE_LEGACY_VERSION } from "../../lib/config/crossplane-versions";
import { strict as assert } from "node:assert";
import { localCrossplaneSource } from "../../host/automation/local-crossplane-source";
import { LocalCrossplane } from "../../host/local-clusters/crossplane";
import {
  compositionName,
  pulumiBackedComposition,
  renderResourcesMode,
} from "../../lib/connector-api/compositions";
import { networkPathCrd } from "../../lib/connector-api/network-path-crd";
import { connectorXrd } from "../../lib/connector-api/xrd";
import type { ImplementationName } from "../../network/registry";
import { eventually, kubectl, kubectlApply, kubectlTry } from "./kubectl";

/**
 * Crossplane core 1.20 as a process on a local cluster (its image cannot be pulled here) with
 * the connector API of one implementation's path (the proxy's unless named): the XRD with
 * that composition as its default, the Pulumi-backed composition (Resources mode) and the
 * NetworkPath CRD the bridge watches. Resolves once the claim type exists.
 */
export async function crossplaneWithConnectorApi(
  kubeconfig: string,
  stateDir: string,
  cluster: string,
  env: NodeJS.ProcessEnv,
  implementation: ImplementationName = "proxy",
): Promise<LocalCrossplane> {
  const source = localCrossplaneSource([env.KLUTCH_CROSSPLANE_LEGACY_CLUSTER_DIR], CROSSPLANE_LEGACY_VERSION);
  kubectl(kubeconfig, ["apply", "--server-side", "-f", source.crdsPath]);
  kubectl(kubeconfig, ["wait", "--for=condition=Established", "crd", "--all", "--timeout=120s"]);
  for (const m of [
    connectorXrd(compositionName(implementation)),
    renderResourcesMode(pulumiBackedComposition(implementation)),
    networkPathCrd(),
  ])
    assert.equal(kubectlApply(kubeconfig, JSON.stringify(m)).status, 0);
  const crossplane = new LocalCrossplane(stateDir, cluster, env);
  await crossplane.start();
  await eventually(
    "the XRD to be established",
    () => kubectlTry(kubeconfig, ["get", "crd", "tcpconnections.klutch.anynines.com"]).status === 0,
    120_000,
  );
  return crossplane;
}
