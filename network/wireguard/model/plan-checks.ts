import { Address4 } from "ip-address";
import { addressInCidr, cidrProblem, cidrsOverlap, isIpv4, parseCidr } from "../../../lib/net/cidr";
import { GATEWAY, WireguardConnection, WireguardPlanInput } from "./types";
import { isDnsLabel } from "../../../lib/net/dns";

/**
 * Input checks of the WireGuard planner. Each check appends one line per problem, naming
 * the field and the fix, so that a bad config is reported in one pass.
 */

export function ipToBig(value: string): bigint {
  return new Address4(value).bigInt();
}

export function isPort(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= 65535;
}

/** host or host:port (IPv6 in brackets) → host:port, or undefined when malformed. */
export function normalizeEndpoint(value: string, defaultPort: number): string | undefined {
  const bracketed = /^\[([0-9a-fA-F:.]+)\](?::(\d{1,5}))?$/.exec(value);
  const plain = /^([A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(value);
  const match = bracketed ?? plain;
  if (!match) return undefined;
  const port = match[2] === undefined ? defaultPort : Number(match[2]);
  if (!isPort(port)) return undefined;
  const host = bracketed ? `[${match[1]}]` : match[1];
  return `${host}:${port}`;
}

interface VpnRequest {
  vpnEndpoint?: string;
  clientIP?: string;
}

/** The `wireguardVPN` enhancement of a connection, checked; problems go to `problems`. */
function vpnRequest(conn: WireguardConnection, where: string, problems: string[]): VpnRequest {
  const entries = (conn.enhancements ?? []).filter((e) => e.ConnectionType === "wireguardVPN");
  if (entries.length > 1)
    problems.push(`${where}.enhancements has ${entries.length} wireguardVPN entries; keep one`);
  const entry = entries[0];
  if (!entry) return {};
  const request: VpnRequest = {};
  if (entry.vpnEndpoint !== undefined) {
    if (typeof entry.vpnEndpoint !== "string" || entry.vpnEndpoint === "") {
      problems.push(
        `${where} wireguardVPN.vpnEndpoint must be host or host:port, such as vpn.example.com:51820`,
      );
    } else request.vpnEndpoint = entry.vpnEndpoint;
  }
  if (entry.clientIP !== undefined) {
    if (!isIpv4(entry.clientIP)) {
      problems.push(
        `${where} wireguardVPN.clientIP ${JSON.stringify(entry.clientIP)} must be an IPv4 address inside the tunnel CIDR`,
      );
    } else request.clientIP = entry.clientIP;
  }
  return request;
}

function describe(conn: WireguardConnection, index: number): string {
  return typeof conn.name === "string" && conn.name
    ? `connections[${index}] (${conn.name})`
    : `connections[${index}]`;
}

/** Checks names, hosts and ports of the connections; returns the wireguardVPN requests per cluster. */
export function checkConnections(
  input: WireguardPlanInput,
  problems: string[],
): Map<string, { endpoint?: { value: string; from: string }; clientIP?: { value: string; from: string } }> {
  const clusters = new Set(input.appClusters);
  const names = new Set<string>();
  const requests = new Map<
    string,
    { endpoint?: { value: string; from: string }; clientIP?: { value: string; from: string } }
  >();
  input.connections.forEach((conn, i) => {
    const where = describe(conn, i);
    if (!isDnsLabel(conn.name)) {
      problems.push(
        `connections[${i}].name ${JSON.stringify(conn.name)} must be a DNS-1123 label such as pg-main`,
      );
    } else if (names.has(conn.name)) {
      problems.push(`${where}.name is used by another connection; connection names must be unique`);
    } else names.add(conn.name);
    if (!clusters.has(conn.appCluster)) {
      problems.push(
        `${where}.appCluster ${JSON.stringify(conn.appCluster)} is not one of the tunnel's app clusters (${[...clusters].join(", ") || "none"}); add it to appClusters or fix the name`,
      );
    }
    if (!isIpv4(conn.instanceHost)) {
      problems.push(
        `${where}.instanceHost ${JSON.stringify(conn.instanceHost)} must be an IPv4 address: WireGuard routes by address (AllowedIPs), so resolve the host name first`,
      );
    } else {
      const host = conn.instanceHost;
      if (!cidrProblem(input.tunnelCidr) && addressInCidr(host, input.tunnelCidr)) {
        problems.push(
          `${where}.instanceHost ${host} lies inside tunnelCidr ${input.tunnelCidr}; pick a tunnelCidr apart from the data-service network`,
        );
      }
      const ds = (input.dataServiceCidrs ?? []).filter((d) => !cidrProblem(d.cidr));
      if (ds.length > 0 && !ds.some((d) => addressInCidr(host, d.cidr))) {
        problems.push(
          `${where}.instanceHost ${host} is outside the data-service networks (${ds.map((d) => `${d.name} ${d.cidr}`).join(", ")}); the gateway only forwards into those`,
        );
      }
    }
    if (!isPort(conn.port))
      problems.push(`${where}.port ${JSON.stringify(conn.port)} must be a TCP port from 1 to 65535`);

    const request = vpnRequest(conn, where, problems);
    const perCluster = requests.get(conn.appCluster) ?? {};
    if (request.vpnEndpoint !== undefined) {
      if (perCluster.endpoint && perCluster.endpoint.value !== request.vpnEndpoint) {
        problems.push(
          `${where} wireguardVPN.vpnEndpoint ${request.vpnEndpoint} differs from ${perCluster.endpoint.value} of ${perCluster.endpoint.from}; app cluster ${conn.appCluster} has one tunnel, so its connections must agree`,
        );
      } else perCluster.endpoint = { value: request.vpnEndpoint, from: where };
    }
    if (request.clientIP !== undefined) {
      if (perCluster.clientIP && perCluster.clientIP.value !== request.clientIP) {
        problems.push(
          `${where} wireguardVPN.clientIP ${request.clientIP} differs from ${perCluster.clientIP.value} of ${perCluster.clientIP.from}; app cluster ${conn.appCluster} has one tunnel address, so its connections must agree`,
        );
      } else perCluster.clientIP = { value: request.clientIP, from: where };
    }
    requests.set(conn.appCluster, perCluster);
  });
  return requests;
}

/** Checks the tunnel CIDR on its own and against every other network. */
export function checkTunnelCidr(input: WireguardPlanInput, problems: string[]): boolean {
  const problem = cidrProblem(input.tunnelCidr);
  if (problem) {
    problems.push(`tunnelCidr ${JSON.stringify(input.tunnelCidr)} ${problem}`);
    return false;
  }
  if (parseCidr(input.tunnelCidr).prefix > 30) {
    problems.push(
      `tunnelCidr ${input.tunnelCidr} has no usable addresses for a gateway and app clusters; use a larger block such as a /24`,
    );
    return false;
  }
  const others = [
    ...(input.clusterCidrs ?? []).map((c) => ({ ...c, kind: "cluster network" })),
    ...(input.dataServiceCidrs ?? []).map((c) => ({ ...c, kind: "data-service network" })),
  ];
  for (const other of others) {
    const otherProblem = cidrProblem(other.cidr);
    if (otherProblem) {
      problems.push(`${other.kind} ${other.name} ${JSON.stringify(other.cidr)} ${otherProblem}`);
    } else if (cidrsOverlap(input.tunnelCidr, other.cidr)) {
      problems.push(
        `tunnelCidr ${input.tunnelCidr} overlaps the ${other.kind} ${other.name} ${other.cidr}; choose a tunnelCidr outside every cluster and data-service network`,
      );
    }
  }
  return true;
}

export function checkAppClusters(input: WireguardPlanInput, problems: string[]): void {
  const seen = new Set<string>();
  for (const name of input.appClusters) {
    if (!isDnsLabel(name)) {
      problems.push(`appClusters entry ${JSON.stringify(name)} must be a DNS-1123 label such as app-1`);
    } else if (seen.has(name)) {
      problems.push(`appClusters lists ${name} twice; each app cluster gets one tunnel`);
    } else if (name === GATEWAY) {
      problems.push(
        `appClusters entry "${GATEWAY}" is reserved for the tunnel's gateway; rename the app cluster`,
      );
    }
    seen.add(name);
  }
}
