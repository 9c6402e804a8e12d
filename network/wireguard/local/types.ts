/**
 * The inputs and outputs of the local WireGuard runtime's dynamic providers: what the bridge
 * program passes in (bridge-program.ts) and what the engine keeps in the state. Types only, so
 * importing them adds nothing to a serialised provider.
 */

export interface LocalGatewayInputs {
  /** Directory of the shared gateway: key, pid file, claims, lock (localGatewayNames). */
  gatewayDir: string;
  dataNetns: string;
  gatewayIfname: string;
  tunnelCidr: string;
  /** The gateway's tunnel address in CIDR notation, e.g. 100.96.0.1/24. */
  gatewayAddress: string;
  listenPort: number;
  /** The rendered gateway filter (render-nftables.ts), loaded when the gateway starts. */
  gatewayFilter: string;
  /** The filter's table, to add and remove set elements in. */
  nftTable: string;
  linkBase: string;
  linkCount: number;
}

export interface LocalWireguardClientInputs extends LocalGatewayInputs {
  group: string;
  netns: string;
  ifname: string;
  linkIfname: string;
  /** Secret: the client's private key (from WireguardKeyPair). */
  privateKey: string;
  publicKey: string;
}

export interface LocalWireguardClientOutputs extends LocalWireguardClientInputs {
  tunnelAddress: string;
  gatewayPublicKey: string;
  /** host:port of the gateway on the client's link. */
  endpoint: string;
}

export interface LocalAllowedHostsInputs {
  dataNetns: string;
  gatewayIfname: string;
  nftTable: string;
  netns: string;
  ifname: string;
  gatewayPublicKey: string;
  /** The client's AllowedIPs for the gateway peer and its routes into the tunnel. */
  allowedIps: string[];
  /** "source . host . port" elements of the gateway filter's `flows` set. */
  flows: string[];
  /** "host . port" elements of its `services` set. */
  services: string[];
}

export interface LocalTcpForwarderInputs {
  /** The connection (its path id): names the pid file, so two resources never share one. */
  name: string;
  /** Directory of the pid and log files. */
  dir: string;
  netns: string;
  listenAddress: string;
  listenPort: number;
  host: string;
  port: number;
}

/**
 * What a forwarder's state says: its inputs, and `failure` while it does not listen. A failed
 * forwarder is state, not an error: an error would fail the group's whole `up`, and with it
 * every other connection of the app cluster (the bridge reports `failure` on this path alone).
 */
export interface LocalTcpForwarderOutputs extends LocalTcpForwarderInputs {
  /** Why the forwarder does not listen, and what to change; absent while it works. */
  failure?: string;
}

/** The bench and the tests call these providers' methods directly, so the type says they are there. */
export type { CompleteProvider } from "../../../providers/dynamic/provider-type";
