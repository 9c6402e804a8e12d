import { z } from "zod";
import type { AppClusterConfig } from "../../../lib/config/schema";
import type { ProxyConnectorConfig } from "./config";
import { proxyExposure } from "./exposure";
import { PROXY_HOPS, type ProxyHop } from "./kernel-path";

const portRange = z
  .object({ from: z.number().int().min(1).max(65535), to: z.number().int().min(1).max(65535) })
  .strict()
  .refine((r) => r.from <= r.to, { message: "from must not be greater than to" });

const exposure = z
  .object({ sourceRanges: z.array(z.string()), internal: z.boolean(), public: z.boolean() })
  .strict();

/** What the bridge is told of an app cluster's proxy (its `proxy` key in the bridge settings). */
export const proxySettings = z
  .object({
    serviceType: z.enum(["ClusterIP", "NodePort", "LoadBalancer"]),
    portRange,
    dedicatedCpus: z.number().int().min(1).max(64).optional(),
    /** kube-proxy alone instead of HAProxy pods (kernel-path.ts); HAProxy when absent. */
    hop: z.enum(PROXY_HOPS as [ProxyHop, ...ProxyHop[]]).optional(),
    /** Who may connect to the group's proxy (exposure.ts). */
    exposure: exposure.optional(),
  })
  .strict();

export type ProxySettings = z.infer<typeof proxySettings>;

/** An app cluster's proxy settings for the bridge, from its `networkConnector`. */
export function proxySettingsOf(app: AppClusterConfig, connector: ProxyConnectorConfig): ProxySettings {
  const exposed = proxyExposure(app, connector);
  return {
    serviceType: connector.serviceType,
    portRange: connector.portRange,
    // Absent for the default, so settings written before the kernel hop read the same.
    ...(connector.hop === "kernel" ? { hop: connector.hop } : {}),
    ...(connector.dedicatedCpus !== undefined ? { dedicatedCpus: connector.dedicatedCpus } : {}),
    // Validation refused an app cluster without one, so this is only absent for configs
    // built around validation (tests); the bridge then refuses a non-ClusterIP proxy.
    ...(exposed.ok ? { exposure: exposed.exposure } : {}),
  };
}
