import { pathId, type NetworkPathObject } from "../../../lib/bridge/model";
import type { WireguardSettings } from "../../../lib/bridge/settings";
import type { ProxyExposure } from "./exposure";
import type { PortRange, ProxyConnection } from "./types";

/** Where a group's proxy runs. */
export type Target =
  | {
      kind: "local";
      stateDir: string;
      bindAddress: string;
      /** The group's ports: the hull of its slots in the bridge's range (lib/bridge/slots.ts). */
      portRange: PortRange;
      /** Ports of portRange in other groups' slots, between this group's blocks. */
      reservedPorts?: number[];
    }
  | {
      kind: "kubernetes";
      kubeconfig: string;
      namespace: string;
      portRange: PortRange;
      serviceType: string;
      /** Who may connect (TcpProxy `exposure`), from the environment's bridge settings. */
      exposure?: ProxyExposure;
      /** Whole CPUs per proxy pod (TcpProxy `dedicatedCpus`); shared CPUs when unset. */
      dedicatedCpus?: number;
      /** Do not wait for the proxy's pods (a cluster without kubelets, e.g. the local ones). */
      skipAwait?: boolean;
      /** The proxy pods' HAProxy image (TcpProxy `image`); its pinned default when unset. */
      proxyImage?: string;
      /** For NodePort: the node address consumers dial (`--node-host`, else a Ready node's). */
      nodeHost?: string;
      /** A wireguard group's tunnel, from the environment's settings (WireguardTunnel.bridgeSettings). */
      wireguard?: WireguardSettings;
    };

/** A path as the proxy reads it; the bridge and the network preview admit and count listeners from it. */
export function toConnection(p: NetworkPathObject): ProxyConnection {
  return {
    id: pathId(p),
    instanceHost: p.spec.instanceHost,
    port: p.spec.port,
    ...(p.spec.enhancements ? { enhancements: p.spec.enhancements } : {}),
  };
}
