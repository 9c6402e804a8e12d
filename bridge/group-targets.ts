import type { BridgeSettings } from "../lib/bridge/settings";
import { targetWithSettings } from "../network/group-settings";
import type { Target } from "./program";

export type KubernetesTarget = Extract<Target, { kind: "kubernetes" }>;

export interface GroupTargetsOptions {
  /** The command line's target (bridge/target-options.ts). */
  target: Target;
  /** The environment's settings (network/group-settings.ts); read for the kubernetes target only. */
  settings: () => Promise<BridgeSettings | undefined>;
}

/**
 * The kubernetes target of each group: the command line's, overlaid with its namespace's
 * settings as last read. The settings are read before each run (the environment stack may
 * change them at any time) and kept, so what a group would run with now can be asked between
 * runs (bridge/node-host-tracker.ts).
 */
export class GroupTargets {
  private lastSettings: BridgeSettings | undefined;

  constructor(private readonly opts: GroupTargetsOptions) {}

  /** Reads the environment's settings again (kubernetes target; the local target has none). */
  async readSettings(): Promise<void> {
    if (this.opts.target.kind === "kubernetes") this.lastSettings = await this.opts.settings();
  }

  /** The group's kubernetes target as of the settings last read; undefined for the local target. */
  kubernetes(key: string): KubernetesTarget | undefined {
    if (this.opts.target.kind !== "kubernetes") return undefined;
    return targetWithSettings(this.opts.target, this.lastSettings, key);
  }
}
