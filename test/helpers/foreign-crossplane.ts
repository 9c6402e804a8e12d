import { localCrossplaneSource } from "../../host/automation/local-crossplane-source";
import { toolchainCrossplaneClusterDirs } from "../../host/automation/toolchain";
import { eventually, kubectl, kubectlTry } from "./kubectl";

/**
 * Crossplane core's Deployment as its chart (2.4.0) labels it, installed by someone else: what
 * an operator's control plane already runs. The checks only read it (lib/crossplane/
 * foreign-crossplane.ts, installed-crossplane.ts), so an API-only local cluster serves.
 */
export const crossplaneDeployment = (
  namespace: string,
  tag: string,
  labels: Record<string, string> = {},
  args: string[] = [],
): string =>
  JSON.stringify({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: "crossplane",
      namespace,
      labels: { app: "crossplane", release: "crossplane", "app.kubernetes.io/name": "crossplane", ...labels },
    },
    spec: {
      selector: { matchLabels: { app: "crossplane", release: "crossplane" } },
      template: {
        metadata: { labels: { app: "crossplane", release: "crossplane" } },
        spec: {
          containers: [
            { name: "crossplane", image: `xpkg.crossplane.io/crossplane/crossplane:${tag}`, args },
          ],
        },
      },
    },
  });

/**
 * The operator's install of Crossplane's CRDs (the toolchain's 2.4.0, as its chart installs
 * them), served before this returns: right after the apply a CRD may have no status yet, which
 * `kubectl wait` reports as an error instead of waiting (test/helpers/bind-crds.ts), so it asks
 * again until it waits.
 */
export async function installCrossplaneCrds(kubeconfig: string): Promise<void> {
  const crds = localCrossplaneSource(toolchainCrossplaneClusterDirs(), "2.4.0").crdsPath;
  kubectl(kubeconfig, ["apply", "--server-side", "-f", crds]);
  await eventually(
    "Crossplane's CRDs to be Established",
    () =>
      kubectlTry(kubeconfig, ["wait", "--for=condition=Established", "--timeout=30s", "-f", crds]).status ===
      0,
    120_000,
  );
}
