import { z } from "zod";
import { cidr, dataServicePorts, port } from "../../lib/config/fields";
import type { ImplementationSpec } from "../implementation";
import { checkWireguard } from "./checks";

/** WireGuard's settings in an app cluster's `networkConnector`. */
export const wireguardConnector = z
  .object({
    implementation: z.literal("wireguard"),
    /** Addresses for the tunnel interfaces; one per app cluster plus the gateway. */
    tunnelCidr: cidr.default("100.96.0.0/24"),
    listenPort: port.default(51820),
    /** host:port where app clusters reach the gateway; derived from the gateway service when omitted. */
    endpoint: z.string().min(1).optional(),
    /** Data-service ports the gateway VM forwards to (OpenStack: opened to the gateway only). */
    dataServicePorts,
    /** Change this value to rotate the key pairs. */
    keyRotation: z.string().default("initial"),
    /**
     * The addresses this app cluster's tunnel client sends from, the only ones the gateway's
     * load balancer admits (`loadBalancerSourceRanges`; the security group of an OpenStack
     * gateway VM). Default: the cluster's `network.egressCidrs`, else its `network.nodeCidr`
     * (loopback for local clusters). The gateway admits every app cluster's.
     */
    allowedSources: z.array(cidr).min(1).optional(),
    /** An internal (private) load balancer. Default: true when every allowed source is private. */
    internal: z.boolean().optional(),
    /**
     * The gateway's UDP port deliberately reachable from the whole internet; only the WireGuard
     * keys guard it (a gateway behind a load balancer only).
     */
    publicEndpoint: z.boolean().default(false),
  })
  .strict();

export type WireguardConnectorConfig = z.output<typeof wireguardConnector>;

export const wireguard: ImplementationSpec<"wireguard", typeof wireguardConnector> = {
  name: "wireguard",
  // The tunnel is the environment stack's; the bridge realises a forwarder per connection
  // and the gateway's allowed hosts (network/wireguard/bridge-program.ts).
  realisation: "forwarded",
  summary:
    "a WireGuard tunnel from each app cluster to a gateway in the data-service network; consumers dial a forwarder in their own cluster",
  schema: wireguardConnector,
  check: checkWireguard,
};
