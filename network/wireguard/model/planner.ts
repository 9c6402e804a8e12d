import { parseCidr, addressToString } from "../../../lib/net/cidr";
import { assignAddresses } from "./addresses";
import {
  checkAppClusters,
  checkConnections,
  checkTunnelCidr,
  ipToBig,
  isPort,
  normalizeEndpoint,
} from "./plan-checks";
import {
  AllowedFlow,
  ClientPlan,
  DEFAULT_PERSISTENT_KEEPALIVE,
  FORWARDER_FALLBACK_PORT,
  GATEWAY,
  WireguardConnection,
  WireguardPlan,
  WireguardPlanError,
  WireguardPlanInput,
} from "./types";

export * from "./types";
export { normalizeEndpoint } from "./plan-checks";

/**
 * The WireGuard network path, planned without Pulumi: which tunnel address each end gets,
 * which peers each end knows and which addresses each peer may use. The component, the
 * renderers and the data-plane tests all work from this one plan.
 *
 * Topology: one gateway in the data-service network, one client per app cluster. A client
 * reaches only the data-service hosts of ITS connections: its AllowedIPs hold those /32s
 * (so nothing else is routed into the tunnel) and the gateway's filter admits only those
 * host:port pairs from that client's tunnel address (so a client that edits its own config
 * still gets nothing more).
 */

/** Forwarder ports inside one client: the connection's own port unless another connection has it. */
function forwarderPorts(connections: WireguardConnection[]): Map<string, number> {
  const used = new Set<number>();
  const ports = new Map<string, number>();
  const sorted = [...connections].sort((a, b) => a.name.localeCompare(b.name));
  for (const conn of sorted) {
    if (!used.has(conn.port)) {
      used.add(conn.port);
      ports.set(conn.name, conn.port);
    }
  }
  let next = FORWARDER_FALLBACK_PORT;
  for (const conn of sorted) {
    if (ports.has(conn.name)) continue;
    while (used.has(next)) next++;
    used.add(next);
    ports.set(conn.name, next);
  }
  return ports;
}

function byAddress(a: string, b: string): number {
  const x = ipToBig(a.split("/")[0] ?? a);
  const y = ipToBig(b.split("/")[0] ?? b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Plans the whole WireGuard path or throws a WireguardPlanError listing every problem. */
export function planWireguard(input: WireguardPlanInput): WireguardPlan {
  const problems: string[] = [];
  if (!isPort(input.listenPort)) {
    problems.push(
      `listenPort ${JSON.stringify(input.listenPort)} must be a UDP port from 1 to 65535, such as 51820`,
    );
  }
  const keepalive = input.persistentKeepalive ?? DEFAULT_PERSISTENT_KEEPALIVE;
  if (!Number.isInteger(keepalive) || keepalive < 0 || keepalive > 65535) {
    problems.push(
      `persistentKeepalive ${JSON.stringify(keepalive)} must be whole seconds from 0 (off) to 65535`,
    );
  }
  checkAppClusters(input, problems);
  const tunnelOk = checkTunnelCidr(input, problems);
  const requests = checkConnections(input, problems);

  const endpoints = new Map<string, string>();
  for (const cluster of input.appClusters) {
    const request = requests.get(cluster)?.endpoint;
    const raw = request?.value ?? input.endpoint;
    if (raw === undefined || raw === "") {
      problems.push(
        `no gateway endpoint for app cluster ${cluster}: set the wireguard connector's endpoint (host:port where app clusters reach the gateway) or a wireguardVPN enhancement with vpnEndpoint`,
      );
      continue;
    }
    const normalized = normalizeEndpoint(raw, isPort(input.listenPort) ? input.listenPort : 51820);
    if (!normalized) {
      const field = request ? `${request.from} wireguardVPN.vpnEndpoint` : "endpoint";
      problems.push(
        `${field} ${JSON.stringify(raw)} must be host or host:port, such as vpn.example.com:51820`,
      );
    } else endpoints.set(cluster, normalized);
  }

  const requestedIps = new Map<string, { value: string; from: string }>();
  for (const [cluster, r] of requests) if (r.clientIP) requestedIps.set(cluster, r.clientIP);
  const addresses = tunnelOk ? assignAddresses(input, requestedIps, problems) : undefined;
  if (problems.length > 0 || !addresses) throw new WireguardPlanError(problems);

  const range = parseCidr(input.tunnelCidr);
  const gatewayAddress = addressToString(range.first + 1n);
  const clients: ClientPlan[] = input.appClusters.map((cluster) => {
    const conns = input.connections.filter((c) => c.appCluster === cluster);
    const ports = forwarderPorts(conns);
    const hosts = [...new Set(conns.map((c) => c.instanceHost))].sort(byAddress).map((h) => `${h}/32`);
    const routes = [`${gatewayAddress}/32`, ...hosts];
    return {
      appCluster: cluster,
      tunnelAddress: addresses.get(cluster) ?? "",
      endpoint: endpoints.get(cluster) ?? "",
      interface: {
        address: `${addresses.get(cluster) ?? ""}/32`,
        peers: [
          {
            name: GATEWAY,
            allowedIps: routes,
            endpoint: endpoints.get(cluster) ?? "",
            ...(keepalive > 0 ? { persistentKeepalive: keepalive } : {}),
          },
        ],
      },
      routes,
      connections: [...conns]
        .sort((a, b) => a.name.localeCompare(b.name))
        .map((c) => ({
          name: c.name,
          appCluster: cluster,
          instanceHost: c.instanceHost,
          port: c.port,
          forwarderPort: ports.get(c.name) ?? c.port,
        })),
    };
  });

  const flowKeys = new Set<string>();
  const allowedFlows: AllowedFlow[] = [];
  for (const client of clients) {
    for (const c of client.connections) {
      const key = `${client.tunnelAddress}|${c.instanceHost}|${c.port}`;
      if (flowKeys.has(key)) continue;
      flowKeys.add(key);
      allowedFlows.push({
        appCluster: client.appCluster,
        source: client.tunnelAddress,
        host: c.instanceHost,
        port: c.port,
      });
    }
  }
  const services = new Map<string, { host: string; port: number }>();
  for (const f of allowedFlows) services.set(`${f.host}|${f.port}`, { host: f.host, port: f.port });
  const sortedServices = [...services.values()].sort((a, b) => byAddress(a.host, b.host) || a.port - b.port);

  return {
    tunnelCidr: input.tunnelCidr,
    listenPort: input.listenPort,
    gateway: {
      tunnelAddress: gatewayAddress,
      interface: {
        address: `${gatewayAddress}/${range.prefix}`,
        listenPort: input.listenPort,
        // The gateway never dials out: clients may sit behind NAT, so they keep the session alive.
        peers: clients.map((c) => ({ name: c.appCluster, allowedIps: [`${c.tunnelAddress}/32`] })),
      },
      allowedFlows,
      services: sortedServices,
    },
    clients,
    assignments: Object.fromEntries(clients.map((c) => [c.appCluster, c.tunnelAddress])),
  };
}
