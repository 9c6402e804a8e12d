/**
 * Inputs of the default (proxy-based) network path, mirroring the XTCPConnection API:
 * `spec.instanceHost`, `spec.port` and the optional `spec.enhancements[]`. No Pulumi here:
 * the planner, the renderer, the component and the dynamic providers all share these.
 */

/** A `spec.enhancements[]` entry; unknown entries are ignored (implementations fall back to core fields). */
export type ConnectionEnhancement = Readonly<Record<string, unknown>>;

/** One XTCPConnection as the proxy sees it. */
export interface ProxyConnection {
  /**
   * `namespace/name` of a TCPConnection claim, or `name` of a cluster-scoped XTCPConnection.
   * Names HAProxy sections and the connection's entry in the port assignments.
   */
  id: string;
  /** `spec.instanceHost`: DNS name or IP address of the data-service instance. */
  instanceHost: string;
  /** `spec.port`. */
  port: number;
  /**
   * `spec.enhancements`. Two entries matter here:
   * - `{ InstanceType: "PostgreSQL" }` turns on a PostgreSQL-aware health check;
   * - `{ ConnectionType: "tlsSNI", serverName: "pg-1.example.com" }` says clients open TLS
   *   straight away and send that server name, so the connection shares the one SNI port
   *   with every other such connection instead of getting a port of its own.
   */
  enhancements?: readonly ConnectionEnhancement[];
}

/** The proxy hands out the ports of its app cluster's `networkConnector.portRange`. */
export type { PortRange } from "../../../lib/net/port-range";

/** What an XTCPConnection's status reports. */
export interface ConsumerEndpoint {
  hostForConsumer: string;
  port: number;
}

/**
 * The port-assignment key shared by every SNI-routed connection. A `*` can never start a
 * Kubernetes name, so it cannot collide with a connection id.
 */
export const SNI_LISTENER = "*tls-sni";

/** The connector API's connection type for SNI routing (see lib/connector-api/names.ts). */
export const TLS_SNI_CONNECTION_TYPE = "tlsSNI";

/** The TLS server name of an SNI-routed connection, or undefined when it has its own port. */
export function sniServerName(connection: ProxyConnection): string | undefined {
  for (const e of connection.enhancements ?? []) {
    if (e.ConnectionType === TLS_SNI_CONNECTION_TYPE && typeof e.serverName === "string") {
      return e.serverName.toLowerCase();
    }
  }
  return undefined;
}

/** True when an `InstanceType` enhancement says the instance is PostgreSQL. */
export function isPostgres(connection: ProxyConnection): boolean {
  return (connection.enhancements ?? []).some(
    (e) => typeof e.InstanceType === "string" && /^postgres(ql)?$/i.test(e.InstanceType),
  );
}

/** The key a connection's port is assigned under: its id, or SNI_LISTENER. */
export function listenerKey(connection: ProxyConnection): string {
  return sniServerName(connection) === undefined ? connection.id : SNI_LISTENER;
}

/** The distinct listener keys of a set of connections, sorted: what the port planner allocates for. */
export function listenerKeys(connections: readonly ProxyConnection[]): string[] {
  return [...new Set(connections.map(listenerKey))].sort(compareStrings);
}

/** Locale-independent ordering, so rendered output never depends on the machine. */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
