import { Address4 } from "ip-address";
import { z } from "zod";
import { cidr } from "../../lib/config/fields";
import type { AppClusterConfig } from "../../lib/config/schema";

/**
 * Who may reach a Service an implementation puts in front of the data-service network (the
 * proxy's data-service ports, the WireGuard gateway's UDP port). Neither may be open by
 * accident: a LoadBalancer Service without `loadBalancerSourceRanges` and without an internal
 * scheme is reachable from the internet. So the default admits only the app cluster's own
 * addresses, on an internal load balancer when those are private.
 */
export interface Exposure {
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
 * The settings of who may reach a Service, in the `networkConnector` of each implementation
 * that puts one in front of the data-service network (proxy, wireguard).
 */
export const exposureSettingsShape = {
  /**
   * The addresses this app cluster's consumers (or tunnel client) connect from, the only ones
   * admitted (Service `loadBalancerSourceRanges`, the proxy pods' NetworkPolicy, a gateway VM's
   * security group). Default: the cluster's `network.egressCidrs`, else its `network.nodeCidr`
   * (loopback for local clusters).
   */
  allowedSources: z.array(cidr).min(1).optional(),
  /**
   * An internal (private) load balancer. Default: true when every allowed source is a
   * private address, since traffic from those arrives only over a private network.
   */
  internal: z.boolean().optional(),
  /** Deliberately reachable from the whole internet (0.0.0.0/0). */
  publicEndpoint: z.boolean().prefault(false),
};

/** An implementation's exposure settings in an app cluster's `networkConnector`. */
export interface ExposureSettings {
  serviceType: "ClusterIP" | "NodePort" | "LoadBalancer";
  allowedSources?: string[] | undefined;
  internal?: boolean | undefined;
  publicEndpoint: boolean;
}

export type ExposureResult = { ok: true; exposure: Exposure } | { ok: false; problem: string };

/**
 * One app cluster's exposure of `subject` (what the message calls the Service's owner), or
 * why there is none: an internet-facing Service with nobody to admit is refused rather than
 * opened to the world.
 */
export function exposureOf(
  app: Pick<AppClusterConfig, "infrastructure" | "network">,
  connector: ExposureSettings,
  subject: string,
): ExposureResult {
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
      problem: `a ${connector.serviceType} ${subject} needs to know who may connect, and this app cluster names no addresses: set networkConnector.allowedSources (or network.egressCidrs) to the addresses its pods connect from, or publicEndpoint: true to open it to the internet on purpose`,
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

/** What a Service gets from its exposure: annotations and spec fields. */
export function serviceExposure(
  exposure: Exposure,
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

/** A NetworkPolicy ingress peer: an address block, or every pod of the cluster (any namespace). */
export type PolicyPeer = { ipBlock: { cidr: string } } | { namespaceSelector: Record<string, never> };

/**
 * Whom the NetworkPolicy of the pods behind an exposed Service admits: a ClusterIP Service is
 * reached only from inside the data-service cluster, so any of its pods; otherwise each admitted
 * source range, which arrives unchanged because the Service keeps the client's address
 * (`externalTrafficPolicy: Local`, serviceExposure).
 */
export function admittedPeers(
  exposure: Exposure,
  serviceType: "ClusterIP" | "NodePort" | "LoadBalancer",
): PolicyPeer[] {
  return serviceType === "ClusterIP"
    ? [{ namespaceSelector: {} }]
    : exposure.sourceRanges.map((cidr) => ({ ipBlock: { cidr } }));
}

/**
 * The exposure of one Service that several app clusters share (the WireGuard gateway): it
 * admits every cluster's sources, and is internal only when each of them would be.
 */
export function sharedExposure(exposures: readonly Exposure[]): Exposure {
  if (exposures.some((e) => e.public)) return { sourceRanges: ["0.0.0.0/0"], internal: false, public: true };
  return {
    sourceRanges: [...new Set(exposures.flatMap((e) => e.sourceRanges))],
    internal: exposures.length > 0 && exposures.every((e) => e.internal),
    public: false,
  };
}

/**
 * Why a component's `exposure` argument cannot be used for its Service, if it cannot: one
 * that is not ClusterIP must name who may connect, never the world by accident and never
 * nobody. `owner` prefixes the message ("TcpProxy orders"); `field` names the argument.
 */
export function exposureArgProblem(
  owner: string,
  field: string,
  serviceType: "ClusterIP" | "NodePort" | "LoadBalancer",
  exposure: Exposure | undefined,
): string | undefined {
  if (serviceType !== "ClusterIP" && !exposure)
    return `${owner}: ${field} is required for a ${serviceType} Service: name who may connect (${field}.sourceRanges, e.g. the app clusters' node or NAT CIDRs), or set ${field}.public to open it to the internet on purpose`;
  if (!exposure) return undefined;
  const world = exposure.sourceRanges.find((r) => r.endsWith("/0"));
  if (world && !exposure.public)
    return `${owner}: ${field}.sourceRanges ${world} admits every address; set ${field}.public: true if that is intended, or list the consumers' CIDRs`;
  if (serviceType !== "ClusterIP" && exposure.sourceRanges.length === 0)
    return `${owner}: ${field}.sourceRanges is empty, so a ${serviceType} Service would admit nobody; list the consumers' CIDRs`;
  return undefined;
}
