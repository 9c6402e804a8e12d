import { addressToString, isIpv4, parseCidr } from "../../../lib/net/cidr";
import { ipToBig } from "./plan-checks";
import { WireguardPlanInput } from "./types";

/**
 * Hands out tunnel addresses: the gateway takes the first usable one; then requested
 * `clientIP`s, then earlier assignments, then the lowest free address in app-cluster order.
 * Earlier assignments are never moved, so adding or removing a cluster leaves others alone.
 */
export function assignAddresses(
  input: WireguardPlanInput,
  requested: Map<string, { value: string; from: string }>,
  problems: string[],
): Map<string, string> | undefined {
  const range = parseCidr(input.tunnelCidr);
  const gateway = range.first + 1n;
  const usable = (a: bigint) => a > range.first && a < range.last && a !== gateway;
  const holder = new Map<bigint, string>();
  const result = new Map<string, string>();
  const take = (cluster: string, a: bigint) => {
    holder.set(a, cluster);
    result.set(cluster, addressToString(a));
  };

  // Earlier assignments of clusters that do not ask for a specific address.
  const previous = new Map<string, bigint>();
  for (const cluster of input.appClusters) {
    const before = input.previousAssignments?.[cluster];
    if (requested.has(cluster) || !isIpv4(before)) continue;
    const a = ipToBig(before);
    if (usable(a) && ![...previous.values()].includes(a)) previous.set(cluster, a);
  }

  for (const cluster of input.appClusters) {
    const request = requested.get(cluster);
    if (!request) continue;
    const a = ipToBig(request.value);
    const heldBefore = [...previous.entries()].find(([, b]) => b === a)?.[0];
    if (a < range.first || a > range.last) {
      problems.push(
        `${request.from} wireguardVPN.clientIP ${request.value} is outside tunnelCidr ${input.tunnelCidr}; pick an address inside it`,
      );
    } else if (a === gateway) {
      problems.push(
        `${request.from} wireguardVPN.clientIP ${request.value} is the gateway's tunnel address; pick another address in ${input.tunnelCidr}`,
      );
    } else if (!usable(a)) {
      problems.push(
        `${request.from} wireguardVPN.clientIP ${request.value} is the network or broadcast address of ${input.tunnelCidr}; pick a host address`,
      );
    } else if (holder.has(a)) {
      problems.push(
        `${request.from} wireguardVPN.clientIP ${request.value} is also requested by app cluster ${holder.get(a)}; each app cluster needs its own address`,
      );
    } else if (heldBefore !== undefined) {
      problems.push(
        `${request.from} wireguardVPN.clientIP ${request.value} is already assigned to app cluster ${heldBefore}; pick a free address (assigned addresses are never moved)`,
      );
    } else take(cluster, a);
  }
  for (const [cluster, a] of previous) {
    if (!holder.has(a)) take(cluster, a);
  }

  const missing = input.appClusters.filter((c) => !result.has(c) && !requested.has(c));
  const free = range.last - range.first - 2n - BigInt(holder.size);
  if (BigInt(missing.length) > free) {
    const usableCount = range.last - range.first - 1n;
    problems.push(
      `tunnelCidr ${input.tunnelCidr} is exhausted: it has ${usableCount} usable address(es), the gateway takes ${addressToString(gateway)} and ${input.appClusters.length} app cluster(s) need one each; choose a larger tunnelCidr such as a /24`,
    );
    return undefined;
  }
  let next = range.first + 2n;
  for (const cluster of missing) {
    while (holder.has(next)) next++;
    take(cluster, next);
  }
  return result;
}
