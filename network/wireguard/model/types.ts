/** Shapes of the WireGuard plan: what the planner takes and what it hands the renderers. */

export const DEFAULT_PERSISTENT_KEEPALIVE = 25;
/** The first port the client's forwarders use when a connection's own port is taken. */
export const FORWARDER_FALLBACK_PORT = 20000;
/** The name the gateway goes by in peer lists and key maps. */
export const GATEWAY = "gateway";

/** A `spec.enhancements[]` entry of an XTCPConnection; unknown entries are ignored. */
export type ConnectionEnhancement = Readonly<Record<string, unknown>>;

/** What the planner needs from one XTCPConnection. */
export interface WireguardConnection {
  /** Unique name of the connection (a DNS-1123 label); names the Service in the app cluster. */
  name: string;
  /** The app cluster that consumes the data service. */
  appCluster: string;
  /** `spec.instanceHost`: the data-service host, an IPv4 address in the data-service network. */
  instanceHost: string;
  /** `spec.port`. */
  port: number;
  /** `spec.enhancements`; a `wireguardVPN` entry may set `vpnEndpoint` and `clientIP`. */
  enhancements?: readonly ConnectionEnhancement[];
}

/** A CIDR with the name errors use for it, e.g. `app-1 podCidr`. */
export interface NamedCidr {
  name: string;
  cidr: string;
}

export interface WireguardPlanInput {
  /** Block the tunnel addresses come from (`networkConnector.tunnelCidr`). */
  tunnelCidr: string;
  /** UDP port the gateway listens on (`networkConnector.listenPort`). */
  listenPort: number;
  /** host or host:port where app clusters reach the gateway (`networkConnector.endpoint`). */
  endpoint?: string;
  /** Seconds between keepalives from clients, 0 for none; keeps NAT mappings open. */
  persistentKeepalive?: number;
  /** Every app cluster that gets a client, in the order new addresses are handed out. */
  appClusters: readonly string[];
  connections: readonly WireguardConnection[];
  /** Node, pod and service networks of the clusters; the tunnel must not overlap them. */
  clusterCidrs?: readonly NamedCidr[];
  /** Data-service networks; the tunnel must not overlap them and instance hosts must lie in them. */
  dataServiceCidrs?: readonly NamedCidr[];
  /** Tunnel addresses handed out before (`WireguardPlan.assignments`), kept where still valid. */
  previousAssignments?: Readonly<Record<string, string>>;
}

/** One `[Peer]` section. `name` is GATEWAY or an app cluster, whose key the renderer looks up. */
export interface WireguardPeerPlan {
  name: string;
  allowedIps: string[];
  endpoint?: string;
  persistentKeepalive?: number;
}

/** One end's interface: its address (CIDR notation), listen port and peers. */
export interface WireguardInterfacePlan {
  address: string;
  listenPort?: number;
  peers: WireguardPeerPlan[];
}

/** A connection as the client serves it: its forwarder listens on `forwarderPort`. */
export interface ConnectionPlan {
  name: string;
  appCluster: string;
  instanceHost: string;
  port: number;
  forwarderPort: number;
}

export interface ClientPlan {
  appCluster: string;
  tunnelAddress: string;
  /** The gateway endpoint this client dials (a `vpnEndpoint` enhancement wins over the default). */
  endpoint: string;
  interface: WireguardInterfacePlan;
  /** Routes to send into the tunnel: exactly the gateway peer's AllowedIPs. */
  routes: string[];
  connections: ConnectionPlan[];
}

/** A flow the gateway lets through: from a client's tunnel address to a host:port. */
export interface AllowedFlow {
  appCluster: string;
  source: string;
  host: string;
  port: number;
}

export interface GatewayPlan {
  tunnelAddress: string;
  interface: WireguardInterfacePlan;
  allowedFlows: AllowedFlow[];
  /** Every data-service host:port served; reachable only through the tunnel. */
  services: { host: string; port: number }[];
}

export interface WireguardPlan {
  tunnelCidr: string;
  listenPort: number;
  gateway: GatewayPlan;
  /** One per app cluster, in the input order. */
  clients: ClientPlan[];
  /** App cluster → tunnel address; feed back as `previousAssignments` to keep them stable. */
  assignments: Record<string, string>;
}

/** Every problem of a plan input at once, one line each. */
export class WireguardPlanError extends Error {
  constructor(public readonly problems: string[]) {
    super(`WireGuard network path: ${problems.length} problem(s)\n  - ${problems.join("\n  - ")}`);
    this.name = "WireguardPlanError";
  }
}
