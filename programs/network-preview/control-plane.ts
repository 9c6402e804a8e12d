import * as k8s from "@kubernetes/client-node";
import { KubePathWriter } from "../bridge/client";
import {
  NETWORK_PATH_GROUP,
  NETWORK_PATH_PLURAL,
  NETWORK_PATH_VERSION,
  type NetworkPathObject,
} from "../../lib/bridge/model";
import { isManaged } from "../../network/registry";
import type { BridgeSettings } from "../../lib/bridge/settings";
import type { ControlPlaneView } from "./plan/model";

/**
 * The control plane as the bridge sees it (read only): every NetworkPath it manages, and
 * which XR each TCPConnection claim has, so the claims file's changes find their paths.
 */
export async function readControlPlane(kubeconfig: string): Promise<ControlPlaneView> {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  const list = (await api.listClusterCustomObject({
    group: NETWORK_PATH_GROUP,
    version: NETWORK_PATH_VERSION,
    plural: NETWORK_PATH_PLURAL,
  })) as { items: NetworkPathObject[] };
  const claims = (await api
    .listClusterCustomObject({ group: "klutch.anynines.com", version: "v1", plural: "tcpconnections" })
    .catch(() => ({ items: [] }))) as {
    items: { metadata: { name: string; namespace: string }; spec?: { resourceRef?: { name?: string } } }[];
  };
  const claimXr = new Map<string, string>();
  for (const c of claims.items) {
    const xr = c.spec?.resourceRef?.name;
    if (xr) claimXr.set(`${c.metadata.namespace}/${c.metadata.name}`, xr);
  }
  return { paths: list.items.filter(isManaged), claimXr };
}

/** The bridge settings the ConfigMap holds now, as the bridge reads them (programs/bridge/client.ts readSettings). */
export async function readLiveSettings(
  kubeconfig: string,
  ref: { namespace: string; name: string },
): Promise<BridgeSettings | undefined> {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  return new KubePathWriter(kc, ref).readSettings();
}
