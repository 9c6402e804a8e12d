import { z } from "zod";
import { zod3Message } from "../config/messages";

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

/**
 * One consumer namespace's entry: its app cluster, the implementation it uses and, under that
 * implementation's name, the settings its spec declares (network/<impl>/model/spec.ts
 * `bridgeSettings`). This envelope is all that lib/ knows; network/plugins/bridge-settings.ts
 * checks each implementation's own settings with its schema.
 */
const consumerSettings = z
  .object({ appCluster: z.string().min(1), implementation: z.string().min(1) })
  .catchall(z.unknown());

const settingsSchema = z
  .object({ version: z.literal(1), consumers: z.record(z.string(), consumerSettings) })
  .strict();

export type BridgeSettings = z.infer<typeof settingsSchema>;

/** The ConfigMap's text: sorted keys, so equal settings give equal bytes. */
export function renderBridgeSettings(settings: BridgeSettings): string {
  const sorted = Object.fromEntries(Object.entries(settings.consumers).sort(([a], [b]) => (a < b ? -1 : 1)));
  return `${JSON.stringify({ version: settings.version, consumers: sorted }, null, 2)}\n`;
}

/** Parses the ConfigMap's text and checks its envelope; the error names the field. */
export function parseSettingsEnvelope(text: string): BridgeSettings {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new Error(`bridge settings: ${SETTINGS_KEY} is not JSON: ${(e as Error).message}`);
  }
  const parsed = settingsSchema.safeParse(raw, { error: zod3Message });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`bridge settings: ${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "invalid"}`);
  }
  return parsed.data;
}
