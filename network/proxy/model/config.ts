import { z } from "zod";
import { port } from "../../../lib/config/fields";
import { exposureSettingsShape } from "../../contract/exposure";
import { PROXY_HOPS, type ProxyHop } from "./kernel-path";

/** The proxy's settings in an app cluster's `networkConnector` (Klutch's default implementation). */
export const proxyConnector = z
  .object({
    implementation: z.literal("proxy"),
    /** How the proxy is exposed to the app cluster's network. */
    serviceType: z.enum(["ClusterIP", "NodePort", "LoadBalancer"]).prefault("LoadBalancer"),
    /** Ports the proxy hands out, one per connection. */
    portRange: z
      .object({ from: port, to: port })
      .strict()
      .refine((r) => r.from <= r.to, { message: "from must not be greater than to", path: ["from"] })
      .prefault({ from: 30000, to: 30999 }),
    /**
     * What carries a connection: HAProxy pods (health checks, TLS server-name routing, a log per
     * connection), or kube-proxy alone (`kernel`: a Service whose EndpointSlices the bridge keeps
     * pointed at the instance's ready endpoints, as fast as dialling the instance; see
     * docs/network-paths.md for what it gives up).
     */
    hop: z.enum(PROXY_HOPS as [ProxyHop, ...ProxyHop[]]).prefault("haproxy"),
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
