import { z } from "zod";

/**
 * What the bridge is told of a wireguard app cluster (its `wireguard` key in the bridge
 * settings): the tunnel's addresses and where to publish flows (cluster-config.ts), known once
 * the environment planned the tunnel (WireguardTunnel.bridgeSettings).
 */
export const wireguardSettings = z
  .object({
    tunnelCidr: z.string().min(1),
    clientAddress: z.string().regex(/^\d{1,3}(\.\d{1,3}){3}$/, "must be an IPv4 address"),
    flows: z.object({ namespace: z.string().min(1), name: z.string().min(1) }).strict(),
    clientHost: z.string().min(1),
  })
  .strict();

export type WireguardSettings = z.infer<typeof wireguardSettings>;
