import { stringify } from "yaml";
import { bindCrds } from "../../lib/bind/crds";
import { DEFAULT_BIND_RELEASE } from "../../lib/bind/upstream/release";
import { eventually, kubectlApply, kubectlTry } from "./kubectl";

/**
 * Applies klutch-bind's CRDs to a cluster and waits until all are Established: the provider's
 * ExportedApi makes an APIServiceExportTemplate, so a cluster without the bind backend needs
 * them first. `waitPerTry` bounds each `kubectl wait`.
 */
export async function installBindCrds(kubeconfig: string, waitPerTry: string): Promise<void> {
  kubectlApply(
    kubeconfig,
    bindCrds(DEFAULT_BIND_RELEASE, {})
      .map((c) => stringify(c))
      .join("---\n"),
  );
  // Right after the apply a CRD may have no status yet, which `kubectl wait` reports as an
  // error (".status.conditions accessor error") instead of waiting: ask again until it waits.
  await eventually(
    "the bind CRDs to be Established",
    () =>
      kubectlTry(kubeconfig, [
        "wait",
        "--for=condition=Established",
        `--timeout=${waitPerTry}`,
        "crd",
        "--all",
      ]).status === 0,
    120_000,
  );
}
