import type { NetworkPathObject } from "../../lib/bridge/model";
import type { WireguardSettings } from "../../network/wireguard/model/settings";
import { networkPath } from "./network-path";
import type { BridgeTarget as Target } from "../../network/contract/bridge-target";

/** Test fixtures of a WireGuard group on clusters (the bridge's kubernetes target). */
export const CLUSTER_SETTINGS: WireguardSettings = {
  tunnelCidr: "100.96.0.0/24",
  clientAddress: "100.96.0.2",
  flows: { namespace: "klutch-network", name: "env-wireguard-gateway-flows" },
  clientHost: "env-wireguard-client.klutch-wireguard.svc.cluster.local",
};

export function clusterTarget(wireguard?: WireguardSettings): Target {
  return {
    kind: "kubernetes",
    kubeconfig: "apiVersion: v1\nkind: Config\n",
    namespace: "klutch-network",
    portRange: { from: 30000, to: 30099 },
    serviceType: "ClusterIP",
    ...(wireguard ? { settings: wireguard } : {}),
  };
}

/** A wireguard NetworkPath of `namespace` to host:5432, with the endpoint it reports, if any. */
export function wireguardPath(
  name: string,
  host: string,
  namespace: string,
  status?: { hostForConsumer: string; port: number },
): NetworkPathObject {
  return networkPath(name, {
    spec: { implementation: "wireguard", consumerNamespace: namespace, instanceHost: host, port: 5432 },
    ...(status ? { status: { ...status, observedGeneration: 1 } } : {}),
  });
}
