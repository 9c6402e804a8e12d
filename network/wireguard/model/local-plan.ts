import { createHash } from "node:crypto";
import { planWireguard } from "./planner";
import { NFT_TABLE, renderGatewayNftables } from "./render-nftables";
import {
  FORWARDER_FALLBACK_PORT,
  WireguardPlanError,
  type WireguardConnection,
  type WireguardPlan,
} from "./types";

/**
 * The local realisation of one bridge group (a consumer namespace), planned without
 * Pulumi or processes: which connections the tunnel can serve, the names of the network
 * namespace and interfaces the group gets, and what its allowed hosts and gateway flows
 * are once its tunnel address is known. Pure, so the bridge program and the tests agree.
 *
 * Locally one gateway (one wireguard-go interface) serves every group; it lives in the
 * data-service network namespace, the way the real gateway lives in the data-service
 * network. Each group is one app cluster's client: its own namespace (the "app cluster",
 * where consumers run), one wireguard-go interface, and one forwarder per connection.
 */

/** The forwarders listen on the client namespace's loopback: only that "app cluster" dials them. */
export const LOCAL_FORWARDER_ADDRESS = "127.0.0.1";
/** Defaults of the connector (network/wireguard/model/config.ts); the local bridge has no per-cluster config. */
export const LOCAL_TUNNEL_CIDR = "100.96.0.0/24";
export const LOCAL_LISTEN_PORT = 51820;
/** The environment variable naming the data-service network namespace of the local target. */
export const LOCAL_DATA_NETNS_ENV = "KLUTCH_WIREGUARD_NETNS";
/** Link networks between client namespaces and the gateway: /30s out of this /18 (link-local). */
export const LOCAL_LINK_BASE = "169.254.64.0";
export const LOCAL_LINK_COUNT = 4096;
/** Placeholders for planning before the tunnel exists: validity never depends on them. */
const PLACEHOLDER_ENDPOINT = "192.0.2.1:51820";

function short(text: string, n = 8): string {
  return createHash("sha256").update(text).digest("hex").slice(0, n);
}

/** Names of one group's local pieces; stable for a group, unique per state dir. */
export interface LocalNames {
  /** The app cluster's stand-in in the plan: a DNS label, never "gateway". */
  appCluster: string;
  /** Network namespace of the client (the app side); consumers run here. */
  netns: string;
  /** The client's WireGuard interface (globally unique: wireguard-go's UAPI sockets share one directory). */
  ifname: string;
  /** The gateway end of the client's link, in the data-service namespace. */
  linkIfname: string;
}

export function localNames(group: string): LocalNames {
  const h = short(group);
  return { appCluster: `c-${h}`, netns: `kwc-${h}`, ifname: `kwc${h}`, linkIfname: `kwl${h}` };
}

/** The shared gateway of a data-service namespace (one per bridge state dir). */
export interface LocalGatewayNames {
  /** Directory with the gateway's key, pid, claims and lock. */
  dir: string;
  ifname: string;
}

export function localGatewayNames(stateDir: string, dataNetns: string): LocalGatewayNames {
  const dir = `${stateDir.replace(/\/+$/, "")}/wireguard/${dataNetns}`;
  return { dir, ifname: `kwg${short(dir)}` };
}

/** A connection as the planner sees it: its address-request enhancements do not apply locally. */
export function localConnection(
  id: string,
  appCluster: string,
  host: string,
  port: number,
): WireguardConnection {
  return { name: id, appCluster, instanceHost: host, port };
}

function planFor(
  appCluster: string,
  connections: readonly WireguardConnection[],
  tunnelAddress?: string,
  tunnelCidr = LOCAL_TUNNEL_CIDR,
): WireguardPlan {
  return planWireguard({
    tunnelCidr,
    listenPort: LOCAL_LISTEN_PORT,
    endpoint: PLACEHOLDER_ENDPOINT,
    appClusters: [appCluster],
    connections,
    ...(tunnelAddress ? { previousAssignments: { [appCluster]: tunnelAddress } } : {}),
  });
}

/**
 * The connections the tunnel can serve and why each other one cannot: every connection is
 * planned alone first, so one bad connection is reported on its own path and never stops
 * the group's others.
 */
export function admitWireguard(
  appCluster: string,
  connections: readonly WireguardConnection[],
  tunnelCidr = LOCAL_TUNNEL_CIDR,
): { admitted: WireguardConnection[]; rejected: Record<string, string> } {
  const admitted: WireguardConnection[] = [];
  const rejected: Record<string, string> = {};
  for (const c of connections) {
    try {
      planFor(appCluster, [c], undefined, tunnelCidr);
      admitted.push(c);
    } catch (e) {
      if (!(e instanceof WireguardPlanError)) throw e;
      rejected[c.name] = e.problems.join("; ");
    }
  }
  return { admitted, rejected };
}

/** What one group's client, forwarders and gateway flows are, once its tunnel address is known. */
export interface LocalGroupPlan {
  gatewayAddress: string;
  /** The client's tunnel address, the flows' source (the one asked for, when it was valid). */
  clientAddress: string;
  /** The client's AllowedIPs for the gateway peer, and its routes into the tunnel. */
  allowedIps: string[];
  /** nftables set elements of the gateway filter: "source . host . port". */
  flows: string[];
  /** nftables set elements "host . port": served hosts, unreachable except through the tunnel. */
  services: string[];
  forwarders: { name: string; listenPort: number; host: string; port: number }[];
}

export function localGroupPlan(
  appCluster: string,
  admitted: readonly WireguardConnection[],
  tunnelAddress?: string,
  previousPorts: Readonly<Record<string, number>> = {},
  tunnelCidr = LOCAL_TUNNEL_CIDR,
): LocalGroupPlan {
  const plan = planFor(appCluster, admitted, tunnelAddress, tunnelCidr);
  const client = plan.clients[0];
  if (!client) throw new Error(`the WireGuard plan has no client for ${appCluster}`);
  const ports = keepPorts(client.connections, previousPorts);
  return {
    gatewayAddress: plan.gateway.tunnelAddress,
    clientAddress: client.tunnelAddress,
    allowedIps: client.routes,
    flows: plan.gateway.allowedFlows.map((f) => `${f.source} . ${f.host} . ${f.port}`),
    services: plan.gateway.services.map((s) => `${s.host} . ${s.port}`),
    forwarders: client.connections.map((c) => ({
      name: c.name,
      listenPort: ports.get(c.name) ?? c.forwarderPort,
      host: c.instanceHost,
      port: c.port,
    })),
  };
}

/**
 * Forwarder ports that stay put: a connection keeps the port its path reports (status.port)
 * while no other connection holds it, so a connection added later, whatever its name,
 * never moves an existing consumer's port. The rest take the planner's choice, or the next
 * free port from it when a kept port took that one.
 */
export function keepPorts(
  connections: readonly { name: string; forwarderPort: number }[],
  previous: Readonly<Record<string, number>>,
): Map<string, number> {
  const out = new Map<string, number>();
  const used = new Set<number>();
  for (const c of connections) {
    const p = previous[c.name];
    if (p !== undefined && Number.isInteger(p) && p >= 1 && p <= 65535 && !used.has(p)) {
      out.set(c.name, p);
      used.add(p);
    }
  }
  for (const c of connections) {
    if (out.has(c.name)) continue;
    let p = c.forwarderPort;
    if (used.has(p)) {
      // Taken by a kept port: the planner's fallback range, as for any port clash.
      p = FORWARDER_FALLBACK_PORT;
      while (used.has(p)) p++;
    }
    out.set(c.name, p);
    used.add(p);
  }
  return out;
}

/** The gateway's base filter for the local gateway: the rendered table, with no flows yet. */
export function emptyPlan(): WireguardPlan {
  return planFor("c-empty", []);
}

/**
 * A group's local client, as the bridge's local target builds it (bridge-program.ts) and the
 * benchmark measures it (test/bench/wireguard.ts): the shared gateway's settings, the group's
 * names and key pair. `K` is the key's type (a Pulumi Output in a program, a string outside).
 */
export function localClientSettings<K>(o: {
  group: string;
  gateway: LocalGatewayNames;
  dataNetns: string;
  /** The planned gateway tunnel address (LocalGroupPlan.gatewayAddress). */
  gatewayAddress: string;
  key: { privateKey: K; publicKey: K };
}) {
  const names = localNames(o.group);
  return {
    group: o.group,
    gatewayDir: o.gateway.dir,
    dataNetns: o.dataNetns,
    gatewayIfname: o.gateway.ifname,
    tunnelCidr: LOCAL_TUNNEL_CIDR,
    gatewayAddress: `${o.gatewayAddress}/${LOCAL_TUNNEL_CIDR.split("/")[1]}`,
    listenPort: LOCAL_LISTEN_PORT,
    gatewayFilter: renderGatewayNftables(emptyPlan(), { interfaceName: o.gateway.ifname }),
    nftTable: NFT_TABLE,
    linkBase: LOCAL_LINK_BASE,
    linkCount: LOCAL_LINK_COUNT,
    netns: names.netns,
    ifname: names.ifname,
    linkIfname: names.linkIfname,
    privateKey: o.key.privateKey,
    publicKey: o.key.publicKey,
  };
}
