import { z } from "zod";
import { cidr, dataServicePorts, port } from "../../../lib/config/fields";
import { exposureSettingsShape } from "../../contract/exposure";

/** WireGuard's settings in an app cluster's `networkConnector`. */
export const wireguardConnector = z
  .object({
    implementation: z.literal("wireguard"),
    /** Addresses for the tunnel interfaces; one per app cluster plus the gateway. */
    tunnelCidr: cidr.prefault("100.96.0.0/24"),
    listenPort: port.prefault(51820),
    /** host:port where app clusters reach the gateway; derived from the gateway service when omitted. */
    endpoint: z.string().min(1).optional(),
    /**
     * The gateway's UDP Service: a load balancer, or a NodePort where there is none (a local
     * control plane, whose node's address and port the clients then dial).
     */
    serviceType: z.enum(["LoadBalancer", "NodePort"]).prefault("LoadBalancer"),
    /** Data-service ports the gateway VM forwards to (OpenStack: opened to the gateway only). */
    dataServicePorts,
    /** Change this value to rotate the key pairs. */
    keyRotation: z.string().prefault("initial"),
    /**
     * Who may reach the gateway's UDP port; it admits every app cluster's sources. A public one
     * is guarded by the WireGuard keys only, and takes a load balancer (not a gateway VM).
     */
    ...exposureSettingsShape,
  })
  .strict();

export type WireguardConnectorConfig = z.output<typeof wireguardConnector>;
