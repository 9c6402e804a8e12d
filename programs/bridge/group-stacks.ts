import type { EngineEvent } from "@pulumi/pulumi/automation";
import type { NetworkPathObject, PathEndpoint, PathProblem } from "../../lib/bridge/api";
import type { CheckpointRecovery } from "../../lib/bridge/checkpoint";
import type { PathHealth } from "../../network/contract/implementation";

/** What a group's engine run reports. */
export interface GroupOutputs {
  endpoints: Record<string, PathEndpoint>;
  problems: Record<string, PathProblem>;
  changes?: Record<string, number>;
}

/**
 * What the reconciler needs of the stacks (a fake one in its unit tests; the real one is
 * programs/bridge/stack-runner.ts). Types only, so the reconciler and its tests load no Pulumi.
 */
export interface GroupStacks {
  /** Brings the group's stack in line with its live paths. */
  up(key: string, live: NetworkPathObject[], run: RunOptions): Promise<GroupOutputs>;
  /** Destroys and removes the stack of a group that has no paths left, and frees its ports. */
  destroy(key: string, run: RunOptions): Promise<void>;
  /**
   * Keeps node ports the API server refused as already allocated out of the group's next runs
   * (lib/bridge/node-port-refusals.ts); true when that holds out any port not held out yet.
   */
  holdOutPorts?(key: string, ports: number[]): boolean;
  /**
   * Each path's health from its data path, by path id, after a run (programs/bridge/path-health.ts);
   * a path left out is as its run reported it.
   */
  health?(key: string, live: NetworkPathObject[]): Promise<Record<string, PathHealth>>;
}

export interface RunOptions {
  /** Refresh before the update (routed paths re-probe; after a repaired checkpoint). */
  refresh: boolean;
  onEvent: (e: EngineEvent) => void;
  /** Called when the group's checkpoint had to be repaired (lib/bridge/checkpoint.ts). */
  onRecovered: (plan: CheckpointRecovery & { sidecars: string[] }) => void;
  log: (level: "warn", msg: string, fields?: Record<string, unknown>) => void;
}
