import type * as k8s from "@kubernetes/client-node";
import { statusCode } from "../../providers/dynamic/kube-errors";

/**
 * Read-modify-write of one key of a ConfigMap, for the CorefileStubZones provider
 * (corefile-stub-zones.ts): a GET, the change made to the text, a PUT carrying the resourceVersion
 * of that GET, so a write by anyone else in between (kubeadm, an EKS add-on update, an operator)
 * fails with 409 Conflict instead of being overwritten; the whole round is then made again on
 * the newer text. A ConfigMapPatch would instead own the whole `data.Corefile` field, and delete
 * it on destroy: the cluster's DNS with it.
 *
 * As in providers/dynamic/export-request.ts, @kubernetes/client-node is required at run time,
 * not imported (lib/kube/kubeconfig.ts's kubeConfigFrom imports it at the top, which Pulumi's
 * closure serializer would try to copy by value, and cannot): this module is copied into the
 * provider's serialised text by value and runs where only node_modules resolve.
 */

export interface CorefileLocation {
  /** Admin kubeconfig of the cluster (a secret: never in a message). */
  kubeconfig: string;
  namespace: string;
  configMap: string;
  key: string;
}

/** How often a GET-change-PUT round is made before a conflict is given up on. */
export const CONFLICT_ATTEMPTS = 5;

function coreApi(kubeconfig: string): k8s.CoreV1Api {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- see the file comment
  const lib = require("@kubernetes/client-node") as typeof k8s;
  const kc = new lib.KubeConfig();
  try {
    kc.loadFromString(kubeconfig);
    // No cluster to talk to: client-node's own error would say "No active cluster!" only.
    if (!kc.getCurrentCluster()) throw new Error("no current cluster");
    return kc.makeApiClient(lib.CoreV1Api);
  } catch {
    // Not the parser's message: it quotes the text it failed on, the secret.
    throw new Error(
      "kubeconfig is not a readable kubeconfig with a current cluster (its text is secret and not shown); pass the app cluster's admin kubeconfig",
    );
  }
}

const placeOf = (at: CorefileLocation) => `ConfigMap ${at.namespace}/${at.configMap}, key ${at.key}`;

/** The text under the key, or undefined when the ConfigMap or the key is not there. */
export async function readCorefile(at: CorefileLocation): Promise<string | undefined> {
  return (await configMapAt(coreApi(at.kubeconfig), at))?.data?.[at.key];
}

/** The ConfigMap, or undefined when it is not there. */
async function configMapAt(api: k8s.CoreV1Api, at: CorefileLocation): Promise<k8s.V1ConfigMap | undefined> {
  try {
    return await api.readNamespacedConfigMap({ name: at.configMap, namespace: at.namespace });
  } catch (err) {
    if (statusCode(err) === 404) return undefined;
    throw err;
  }
}

/**
 * Applies `change` to the text under the key and writes the result back, again from a new read
 * after a conflict. `missing`: what a missing ConfigMap or key is, an error (there must be a
 * Corefile to add to) or nothing to do (on delete). An unchanged text is not written.
 */
export async function editCorefile(
  at: CorefileLocation,
  change: (text: string, where: string) => string,
  missing: "fail" | "skip",
): Promise<void> {
  const api = coreApi(at.kubeconfig);
  const where = placeOf(at);
  for (let attempt = 1; ; attempt++) {
    const map = await configMapAt(api, at);
    const text = map?.data?.[at.key];
    if (map === undefined || text === undefined) {
      if (missing === "skip") return;
      throw new Error(
        `${where} was not found; set namespace, configMap and key to where the cluster's CoreDNS reads its Corefile (kubeadm and EKS: kube-system/coredns, Corefile)`,
      );
    }
    const changed = change(text, where);
    if (changed === text) return;
    try {
      await api.replaceNamespacedConfigMap({
        name: at.configMap,
        namespace: at.namespace,
        fieldManager: "klutch-instance-names",
        // metadata as read: its resourceVersion makes the PUT fail if anyone wrote in between.
        body: { ...map, data: { ...map.data, [at.key]: changed } },
      });
      return;
    } catch (err) {
      if (statusCode(err) !== 409) throw err;
      if (attempt >= CONFLICT_ATTEMPTS)
        throw new Error(
          `${where} was changed by someone else during each of ${CONFLICT_ATTEMPTS} attempts to write it; run again once the writes settle`,
        );
    }
    await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
  }
}
