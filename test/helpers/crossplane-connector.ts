import { strict as assert } from "node:assert";
import { localCrossplaneSource } from "../../lib/crossplane/local-source";
import { LocalCrossplane } from "../../local-clusters/crossplane";
import {
  compositionName,
  pulumiBackedComposition,
  renderResourcesMode,
} from "../../network/connector-api/compositions";
import { networkPathCrd } from "../../network/connector-api/network-path-crd";
import { connectorXrd } from "../../network/connector-api/xrd";
import { eventually, kubectl, kubectlApply, kubectlTry } from "./kubectl";

/**
 * Crossplane core 1.20 as a process on a local cluster (its image cannot be pulled here) with
 * the connector API of the proxy path: the XRD, the Pulumi-backed composition (Resources mode)
 * and the NetworkPath CRD the bridge watches. Resolves once the claim type exists.
 */
export async function crossplaneWithConnectorApi(
  kubeconfig: string,
  stateDir: string,
  cluster: string,
  env: NodeJS.ProcessEnv,
): Promise<LocalCrossplane> {
  const source = localCrossplaneSource(env.KLUTCH_CROSSPLANE_CLUSTER_DIR, "1.20.1");
  kubectl(kubeconfig, ["apply", "--server-side", "-f", source.crdsPath]);
  kubectl(kubeconfig, ["wait", "--for=condition=Established", "crd", "--all", "--timeout=120s"]);
  for (const m of [
    connectorXrd(compositionName("proxy")),
    renderResourcesMode(pulumiBackedComposition("proxy")),
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
