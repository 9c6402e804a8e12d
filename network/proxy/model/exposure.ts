import type { AppClusterConfig } from "../../../lib/config/schema";
import {
  type Exposure,
  type ExposureResult,
  type PolicyPeer,
  admittedPeers,
  exposureOf,
} from "../../contract/exposure";
import type { ProxyConnectorConfig } from "./config";

/**
 * Who may reach the proxy's data-service ports. The proxy must not be an open relay: only
 * the app cluster's own addresses get in (network/contract/exposure.ts).
 */
export type ProxyExposure = Exposure;

/** The proxy's exposure for one app cluster, or why there is none. */
export function proxyExposure(
  app: Pick<AppClusterConfig, "infrastructure" | "network">,
  connector: Pick<ProxyConnectorConfig, "serviceType" | "allowedSources" | "internal" | "publicEndpoint">,
): ExposureResult {
  return exposureOf(app, connector, "proxy");
}

/**
 * The ingress rule of the proxy pods' NetworkPolicy: the listener ports, from the admitted
 * sources only (any pod of the data-service cluster for a ClusterIP proxy). The kubelet's
 * probes are not subject to it (NetworkPolicy always allows traffic from the pod's node).
 */
export function ingressRule(
  exposure: ProxyExposure,
  serviceType: "ClusterIP" | "NodePort" | "LoadBalancer",
  ports: number[],
): { from: PolicyPeer[]; ports: { protocol: "TCP"; port: number }[] } {
  return {
    from: admittedPeers(exposure, serviceType),
    ports: ports.map((port) => ({ protocol: "TCP" as const, port })),
  };
}
