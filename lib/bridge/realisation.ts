/**
 * How the bridge realises each network implementation. Kept in a file of its own: the
 * implementation registry (network/<impl>/) replaces it.
 */

/**
 * How the bridge realises an implementation's paths:
 * - `proxy`: a TCP proxy per group, hostForConsumer is the proxy;
 * - `routed`: the stack already built a routed network between app clusters and the
 *   data services (WireGuard tunnel, VPC peering, OpenStack routes and security groups),
 *   so consumers dial the instance itself; the bridge probes it and reports it;
 * - `ignored`: NOOP, whose marker NetworkPath nobody realises.
 */
export type Realisation = "proxy" | "routed" | "ignored";

const REALISATIONS: Readonly<Record<string, Realisation>> = {
  proxy: "proxy",
  wireguard: "routed",
  awsVpcPeering: "routed",
  openstack: "routed",
  noop: "ignored",
};

/** The realisation of an implementation, or undefined for one this bridge does not know. */
export function realisationOf(implementation: string): Realisation | undefined {
  return Object.hasOwn(REALISATIONS, implementation) ? REALISATIONS[implementation] : undefined;
}

/** Error for a path whose implementation the bridge does not realise. */
export function unsupportedImplementation(implementation: string): string {
  const known = Object.keys(REALISATIONS).filter((k) => REALISATIONS[k] !== "ignored");
  return `implementation "${implementation}" is not realised by this bridge; it realises ${known.join(", ")} (noop needs no bridge)`;
}
