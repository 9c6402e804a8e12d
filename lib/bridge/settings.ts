import { z } from "zod";

/**
 * What the environment stack tells the Crossplane bridge: per consumer namespace on the
 * control plane (one per app cluster), the app cluster's network connector settings, so a
 * connection's path is built as that app cluster's `networkConnector` says. The stack
 * writes it into a ConfigMap (network/plugins/bridge-settings.ts builds it from the config); the
 * bridge reads it on every reconcile. Pure.
 */

export const SETTINGS_NAMESPACE = "klutch-network";
export const SETTINGS_CONFIGMAP = "klutch-bridge-settings";
export const SETTINGS_KEY = "settings.json";
/** Re-exported for the environment stack's importers; the name lives beside the lease code. */
export { LEADER_LEASE } from "./lease";

const portRange = z
  .object({ from: z.number().int().min(1).max(65535), to: z.number().int().min(1).max(65535) })
  .strict()
  .refine((r) => r.from <= r.to, { message: "from must not be greater than to" });

const exposure = z
  .object({ sourceRanges: z.array(z.string()), internal: z.boolean(), public: z.boolean() })
  .strict();

const proxySettings = z
  .object({
    serviceType: z.enum(["ClusterIP", "NodePort", "LoadBalancer"]),
    portRange,
    dedicatedCpus: z.number().int().min(1).max(64).optional(),
    /** Who may connect to the group's proxy (network/proxy/model/exposure.ts). */
    exposure: exposure.optional(),
  })
  .strict();

/** Where the bridge publishes a wireguard app cluster's flows (network/wireguard/model/cluster-config.ts). */
const wireguardSettings = z
  .object({
    tunnelCidr: z.string().min(1),
    clientAddress: z.string().regex(/^\d{1,3}(\.\d{1,3}){3}$/, "must be an IPv4 address"),
    flows: z.object({ namespace: z.string().min(1), name: z.string().min(1) }).strict(),
    clientHost: z.string().min(1),
  })
  .strict();

const consumerSettings = z
  .object({
    appCluster: z.string().min(1),
    implementation: z.string().min(1),
    proxy: proxySettings.optional(),
    wireguard: wireguardSettings.optional(),
  })
  .strict();

const settingsSchema = z.object({ version: z.literal(1), consumers: z.record(consumerSettings) }).strict();

export type BridgeSettings = z.infer<typeof settingsSchema>;
export type ProxySettings = z.infer<typeof proxySettings>;
export type WireguardSettings = z.infer<typeof wireguardSettings>;

/** The ConfigMap's text: sorted keys, so equal settings give equal bytes. */
export function renderBridgeSettings(settings: BridgeSettings): string {
  const sorted = Object.fromEntries(Object.entries(settings.consumers).sort(([a], [b]) => (a < b ? -1 : 1)));
  return `${JSON.stringify({ version: settings.version, consumers: sorted }, null, 2)}\n`;
}

/** Parses and checks the ConfigMap's text; the error names the field. */
export function parseBridgeSettings(text: string): BridgeSettings {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new Error(`bridge settings: ${SETTINGS_KEY} is not JSON: ${(e as Error).message}`);
  }
  const parsed = settingsSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`bridge settings: ${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "invalid"}`);
  }
  return parsed.data;
}

/** The proxy settings of a consumer namespace, when the stack gave any. */
export function proxySettingsFor(
  settings: BridgeSettings | undefined,
  namespace: string | undefined,
): ProxySettings | undefined {
  if (!settings || !namespace) return undefined;
  return settings.consumers[namespace]?.proxy;
}

/** The WireGuard settings of a consumer namespace, when the stack gave any. */
export function wireguardSettingsFor(
  settings: BridgeSettings | undefined,
  namespace: string | undefined,
): WireguardSettings | undefined {
  if (!settings || !namespace) return undefined;
  return settings.consumers[namespace]?.wireguard;
}
