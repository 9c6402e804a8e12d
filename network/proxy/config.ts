import { z } from "zod";
import { cidr, port } from "../../lib/config/fields";
import type { ImplementationSpec } from "../implementation";
import { checkProxy } from "./checks";

/** The proxy's settings in an app cluster's `networkConnector` (Klutch's default implementation). */
export const proxyConnector = z
  .object({
    implementation: z.literal("proxy"),
    /** How the proxy is exposed to the app cluster's network. */
    serviceType: z.enum(["ClusterIP", "NodePort", "LoadBalancer"]).default("LoadBalancer"),
    /** Ports the proxy hands out, one per connection. */
    portRange: z
      .object({ from: port, to: port })
      .strict()
      .refine((r) => r.from <= r.to, { message: "from must not be greater than to", path: ["from"] })
      .default({ from: 30000, to: 30999 }),
    /**
     * Whole CPUs per proxy pod, pinned, with busy polling (lowest latency, one busy CPU per
     * thread); shared CPUs when unset.
     */
    dedicatedCpus: z.number().int().min(1).max(64).optional(),
    /**
     * The addresses this app cluster's consumers connect from, the only ones the proxy admits
     * (Service `loadBalancerSourceRanges` and the proxy pods' NetworkPolicy). Default: the
     * cluster's `network.egressCidrs`, else its `network.nodeCidr` (loopback for local clusters).
     */
    allowedSources: z.array(cidr).min(1).optional(),
    /**
     * An internal (private) load balancer. Default: true when every allowed source is a
     * private address, since traffic from those arrives only over a private network.
     */
    internal: z.boolean().optional(),
    /** Deliberately reachable from the whole internet (0.0.0.0/0); only the database's own password guards it. */
    publicEndpoint: z.boolean().default(false),
  })
  .strict();

export type ProxyConnectorConfig = z.output<typeof proxyConnector>;

export const proxy: ImplementationSpec<"proxy", typeof proxyConnector> = {
  name: "proxy",
  realisation: "proxy",
  summary:
    "a TCP proxy (HAProxy) per consumer namespace in the data-service cluster; consumers dial the proxy",
  schema: proxyConnector,
  check: checkProxy,
};
