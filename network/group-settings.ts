import { zod3Message } from "../lib/config/messages";
import { groupImplementation, groupNamespace } from "../lib/bridge/grouping";
import { parseSettingsEnvelope, type BridgeSettings } from "../lib/bridge/settings";
import type { KubernetesTarget } from "./contract/implementation";
import { implementationSpec } from "./registry";

/**
 * The bridge settings as each implementation's spec declares them: read and checked whole (the
 * envelope by lib/bridge/settings.ts, each consumer's own settings by its implementation's
 * schema), and laid onto a group's target. Pure.
 */

/** Parses and checks the settings ConfigMap's text; the error names the field. */
export function parseBridgeSettings(text: string): BridgeSettings {
  const settings = parseSettingsEnvelope(text);
  for (const [namespace, consumer] of Object.entries(settings.consumers)) {
    const { implementation } = consumer;
    const spec = implementationSpec(implementation);
    // An implementation this bridge does not know: its groups are refused by name when they run.
    if (!spec) continue;
    const own = Object.fromEntries(
      Object.entries(consumer).filter(([k]) => k !== "appCluster" && k !== "implementation"),
    );
    for (const [key, value] of Object.entries(own)) {
      const at = `consumers.${namespace}.${key}`;
      if (key !== implementation)
        throw new Error(
          `bridge settings: ${at}: a ${implementation} consumer holds only "${implementation}" settings`,
        );
      if (!spec.bridgeSettings)
        throw new Error(`bridge settings: ${at}: ${implementation} takes no settings`);
      const parsed = spec.bridgeSettings.schema.safeParse(value, { error: zod3Message });
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        const field = [at, ...(issue?.path ?? [])].join(".");
        throw new Error(`bridge settings: ${field}: ${issue?.message ?? "invalid"}`);
      }
      consumer[key] = parsed.data;
    }
  }
  return settings;
}

/** The group's implementation's own settings (as checked by parseBridgeSettings), if the stack gave any. */
export function groupSettings(settings: BridgeSettings | undefined, group: string): unknown {
  const namespace = groupNamespace(group);
  const consumer = namespace === undefined ? undefined : settings?.consumers[namespace];
  const implementation = groupImplementation(group);
  return consumer?.implementation === implementation ? consumer[implementation] : undefined;
}

/** A group's kubernetes target: the bridge's flags, with its implementation's settings laid on. */
export function targetWithSettings(
  base: KubernetesTarget,
  settings: BridgeSettings | undefined,
  group: string,
): KubernetesTarget {
  const own = groupSettings(settings, group);
  if (own === undefined) return base;
  const spec = implementationSpec(groupImplementation(group));
  const target = spec?.bridgeSettings?.applyToTarget?.(base, own) ?? base;
  return { ...target, settings: own };
}
