import { z } from "zod";
import { port } from "../../../lib/config/fields";
import { exposureSettingsShape } from "../../contract/exposure";

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
    /** Who may reach the proxy; a public one is guarded by the database's own password only. */
    ...exposureSettingsShape,
  })
  .strict();

export type ProxyConnectorConfig = z.output<typeof proxyConnector>;
