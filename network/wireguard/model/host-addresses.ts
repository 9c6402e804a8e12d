import { isIpv4 } from "../../../lib/net/cidr";

/**
 * Instance hosts given by name, as Klutch's data services give them: a8s's binding Secret names
 * the instance's Service (`instance_service`, `<instance>.<namespace>.svc.cluster.local`), and so
 * does the local backend (programs/composition-function/local-postgresql.ts). WireGuard routes by address
 * (the client's AllowedIPs and routes, the gateway's nftables flows), so on clusters the bridge
 * resolves each name where the gateway sits, in the control plane's network, and plans with the
 * address. Pure: the caller resolves (network/wireguard/cluster-program.ts).
 */

/** What resolving one instance host gave: its IPv4 address, or why there is none. */
export type HostAddress = { address: string } | { problem: string };

/** Each instance host name of a group, resolved. */
export type HostAddresses = Readonly<Record<string, HostAddress>>;

/**
 * Stand-ins for names nobody resolved (the network preview's prediction, made where the
 * control plane's names may not resolve): TEST-NET-1 (RFC 5737), never routed. They only let
 * the group be planned; what a consumer dials (the forwarder's host and port) never depends on
 * the instance's address.
 */
const STAND_IN_BASE = "192.0.2.";

/** The distinct instance hosts that are names, not IPv4 addresses, sorted. */
export function hostNames(hosts: readonly string[]): string[] {
  return [...new Set(hosts.filter((h) => !isIpv4(h)))].sort();
}

/**
 * The address to plan a connection with: an IPv4 host as it is; a name by what resolving it
 * gave (`resolved`), or, when nothing was resolved (`resolved` undefined), a stand-in address
 * of its own so the plan can be predicted.
 */
export function plannedAddress(
  host: string,
  resolved: HostAddresses | undefined,
  allNames: readonly string[],
): { address: string } | { problem: string } {
  if (isIpv4(host)) return { address: host };
  if (!resolved) {
    const i = allNames.indexOf(host);
    return { address: `${STAND_IN_BASE}${(i < 0 ? 0 : i % 254) + 1}` };
  }
  const found = resolved[host];
  if (!found) return { problem: unresolvedMessage(host, "it was not looked up") };
  if ("problem" in found) return { problem: unresolvedMessage(host, found.problem) };
  if (!isIpv4(found.address))
    return {
      problem: unresolvedMessage(host, `it gave ${JSON.stringify(found.address)}, not an IPv4 address`),
    };
  return { address: found.address };
}

function unresolvedMessage(host: string, why: string): string {
  return `instanceHost ${JSON.stringify(host)} does not resolve to an IPv4 address where the WireGuard gateway runs (${why}); WireGuard routes by address, so the name must resolve in the control plane's network (a Service's DNS name does), or give the instance's address`;
}
