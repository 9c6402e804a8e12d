import type { BridgeSettings } from "../../lib/bridge/settings";
import { groupSettings, targetWithSettings } from "../../network/group-settings";
import type { Target } from "./program";

export type KubernetesTarget = Extract<Target, { kind: "kubernetes" }>;

export interface GroupTargetsOptions {
  /** The command line's target (programs/bridge/target-options.ts). */
  target: Target;
  /** The environment's settings (network/group-settings.ts); read for the kubernetes target only. */
  settings: () => Promise<BridgeSettings | undefined>;
}

/**
 * The kubernetes target of each group: the command line's, overlaid with its namespace's
 * settings as last read. The settings are read before each run (the environment stack may
 * change them at any time) and kept, so what a group would run with now can be asked between
 * runs (programs/bridge/node-host-tracker.ts).
 */
export class GroupTargets {
  private lastSettings: BridgeSettings | undefined;
  /** Each group's own settings as its last run used them (JSON; "" for none). */
  private readonly realised = new Map<string, string>();

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

  /** The target a group runs with now, remembered as run (for settingsMoved). */
  realise(key: string): KubernetesTarget | undefined {
    const target = this.kubernetes(key);
    if (target) this.realised.set(key, ownSettings(this.lastSettings, key));
    return target;
  }

  /**
   * Whether these settings give the group other settings than its last run used: the
   * environment stack changed its app cluster's networkConnector (a port range, a Service type,
   * the hop), and nothing else would run the group before one of its paths changes. A group
   * not run yet is queued by the cache anyway.
   */
  settingsMoved(key: string, settings: BridgeSettings | undefined): boolean {
    const last = this.realised.get(key);
    return last !== undefined && last !== ownSettings(settings, key);
  }

  /** Forgets a group whose stack is gone. */
  forget(key: string): void {
    this.realised.delete(key);
  }
}

function ownSettings(settings: BridgeSettings | undefined, key: string): string {
  return JSON.stringify(groupSettings(settings, key) ?? null);
}
