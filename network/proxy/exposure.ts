import { Address4 } from "ip-address";
import type { AppClusterConfig } from "../../lib/config/schema";
import type { ProxyConnectorConfig } from "./config";

/**
 * Who may reach the proxy's data-service ports. The proxy must not be an open relay: a
 * LoadBalancer Service without `loadBalancerSourceRanges` and without an internal scheme is
 * reachable from the internet on every proxied port. So the default admits only the app
 * cluster's own addresses, on an internal load balancer when those are private.
 */
export interface ProxyExposure {
  /** Source CIDRs admitted; `0.0.0.0/0` only with publicEndpoint. Empty for ClusterIP (in-cluster only). */
  sourceRanges: string[];
  /** Ask the cloud for an internal (private) load balancer. */
  internal: boolean;
  /** The operator chose a world-open endpoint (publicEndpoint: true). */
  public: boolean;
}

/** Loopback: where local clusters and their proxies live. */
export const LOCAL_SOURCES = ["127.0.0.0/8"];

/** RFC 1918 and the shared address space (RFC 6598), which the internet does not route. */
const PRIVATE = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "127.0.0.0/8"];

export function isPrivateCidr(cidr: string): boolean {
  if (!Address4.isValid(cidr)) return false;
  const c = new Address4(cidr);
  return PRIVATE.some((p) => c.isInSubnet(new Address4(p)));
}

/**
 * The proxy's exposure for one app cluster, or why there is none: an internet-facing
 * Service with nobody to admit is refused rather than opened to the world.
 */
export function proxyExposure(
  app: Pick<AppClusterConfig, "infrastructure" | "network">,
  connector: Pick<ProxyConnectorConfig, "serviceType" | "allowedSources" | "internal" | "publicEndpoint">,
): { ok: true; exposure: ProxyExposure } | { ok: false; problem: string } {
  if (connector.publicEndpoint) {
    if (connector.allowedSources) {
      return {
        ok: false,
        problem:
          "publicEndpoint admits every address, so allowedSources would be ignored; remove one of the two",
      };
    }
    return { ok: true, exposure: { sourceRanges: ["0.0.0.0/0"], internal: false, public: true } };
  }
  if (connector.serviceType === "ClusterIP") {
    // Reachable only inside the data-service cluster; its NetworkPolicy admits that cluster's pods.
    return { ok: true, exposure: { sourceRanges: [], internal: true, public: false } };
  }
  const sources =
    connector.allowedSources ??
    (app.network?.egressCidrs?.length ? app.network.egressCidrs : undefined) ??
    (app.network?.nodeCidr ? [app.network.nodeCidr] : undefined) ??
    (app.infrastructure === "local" ? LOCAL_SOURCES : undefined);
  if (!sources) {
    return {
      ok: false,
      problem: `a ${connector.serviceType} proxy needs to know who may connect, and this app cluster names no addresses: set networkConnector.allowedSources (or network.egressCidrs) to the addresses its pods connect from, or publicEndpoint: true to open it to the internet on purpose`,
    };
  }
  const world = sources.find((s) => s.endsWith("/0"));
  if (world) {
    return {
      ok: false,
      problem: `allowedSources ${world} admits every address; set publicEndpoint: true if that is intended, or list the consumers' CIDRs`,
    };
  }
  return {
    ok: true,
    exposure: {
      sourceRanges: [...sources],
      internal: connector.internal ?? sources.every(isPrivateCidr),
      public: false,
    },
  };
}

/**
 * Annotations that ask each cloud's load balancer controller for a private load balancer.
 * Each controller reads only its own; the others are inert.
 * - AWS Load Balancer Controller: `service.beta.kubernetes.io/aws-load-balancer-scheme`
 *   (docs: guide/service/annotations, "internal" or "internet-facing"; its default is internal
 *   only for NLBs it provisions, so it is set explicitly);
 * - the in-tree/cloud-provider-aws Service controller: `...aws-load-balancer-internal: "true"`;
 * - cloud-provider-openstack (octavia): `service.beta.kubernetes.io/openstack-internal-load-balancer: "true"`
 *   (docs/openstack-cloud-controller-manager/expose-applications-using-loadbalancer-type-service.md).
 */
export const INTERNAL_LB_ANNOTATIONS: Readonly<Record<string, string>> = {
  "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal",
  "service.beta.kubernetes.io/aws-load-balancer-internal": "true",
  "service.beta.kubernetes.io/openstack-internal-load-balancer": "true",
};

/** Marks a Service that is open to the world on purpose (publicEndpoint); the policy pack looks for it. */
export const PUBLIC_ENDPOINT_ANNOTATION = "klutch.anynines.com/public-endpoint";

/** What the proxy's Service gets from its exposure: annotations and spec fields. */
export function serviceExposure(
  exposure: ProxyExposure,
  serviceType: "ClusterIP" | "NodePort" | "LoadBalancer",
): {
  annotations: Record<string, string>;
  loadBalancerSourceRanges?: string[];
  externalTrafficPolicy?: "Local";
} {
  if (serviceType === "ClusterIP") return { annotations: {} };
  const annotations: Record<string, string> = exposure.public
    ? { [PUBLIC_ENDPOINT_ANNOTATION]: "true" }
    : exposure.internal && serviceType === "LoadBalancer"
      ? { ...INTERNAL_LB_ANNOTATIONS }
      : {};
  return {
    annotations,
    ...(serviceType === "LoadBalancer" ? { loadBalancerSourceRanges: [...exposure.sourceRanges] } : {}),
    // Keep the client's address (no SNAT to a node), so the pods' NetworkPolicy can judge it.
    externalTrafficPolicy: "Local",
  };
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
): {
  from: ({ ipBlock: { cidr: string } } | { namespaceSelector: Record<string, never> })[];
  ports: { protocol: "TCP"; port: number }[];
} {
  const from =
    serviceType === "ClusterIP"
      ? [{ namespaceSelector: {} as Record<string, never> }]
      : exposure.sourceRanges.map((cidr) => ({ ipBlock: { cidr } }));
  return { from, ports: ports.map((port) => ({ protocol: "TCP" as const, port })) };
}
