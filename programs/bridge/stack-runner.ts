import type { Stack } from "@pulumi/pulumi/automation";
import type { NetworkPathObject, PathEndpoint, PathProblem } from "../../lib/bridge/api";
import { kubernetesKind } from "../../lib/bridge/drift";
import { stackName } from "../../lib/bridge/grouping";
import type { NodeLike, NodePortHosts } from "../../lib/bridge/node-host";
import type { BridgeSettings } from "../../lib/bridge/settings";
import { CancellableRuns } from "./cancellable-runs";
import { recoverCheckpoint } from "./checkpoint";
import { upFromEvents } from "./engine-run";
import { withEngineTmp } from "../../host/automation/engine-tmp";
import type { GroupOutputs, GroupStacks, RunOptions } from "./group-stacks";
import { GroupTargets } from "./group-targets";
import { HeldOutPorts } from "../../lib/bridge/node-port-refusals";
import { NodeHostTracker } from "./node-host-tracker";
import { implementationSpec } from "../../network/registry";
import type { PathHealth, TargetFollower } from "../../network/contract/implementation";
import { groupImplementation } from "../../lib/bridge/grouping";
import { reapOrphans } from "./orphans";
import { groupProgram, type Target } from "./program";
import { SlotStore } from "./slot-store";
import { StackLocks } from "./stack-locks";
import { TargetFollowers } from "./target-followers";
import { PathHealthTracker } from "./path-health";
import { bridgeStatePaths } from "./state-dir";
import { GroupWorkspaces, PROJECT, fileBackendDir } from "./workspaces";

export interface StackRunnerOptions {
  target: Target;
  stateDir: string;
  pulumiEnv: Record<string, string>;
  secretsProvider?: string;
  /** The bridge reconciles only while it holds the leader lease (`--leader-elect`). */
  leaderElected?: boolean;
  /** Ports per slot for the local target (a group holds whole slots; lib/bridge/slots.ts). */
  slotSize: number;
  /** The most ports one group may hold (local target); the whole --port-range when unset. */
  maxPortsPerGroup?: number;
  /** The environment's settings (kubernetes target). */
  settings: () => Promise<BridgeSettings | undefined>;
  /**
   * The data-service cluster's nodes (kubernetes target), for the host a NodePort proxy
   * reports when `--node-host` gives none (lib/bridge/node-host.ts).
   */
  nodes?: () => Promise<NodeLike[]>;
  /** The clock refused node ports are held out by (tests give a fake one). */
  now?: () => number;
}

/**
 * The ports a local group's program holds, as its implementation counts them (its spec's
 * localPorts; none when it holds none).
 */
export function portsNeeded(key: string, live: readonly NetworkPathObject[]): number {
  return implementationSpec(groupImplementation(key))?.localPorts?.(live) ?? 0;
}

/**
 * Runs the groups' Pulumi stacks (controller-runtime has no such seam; it is what a reconciler
 * of an external system needs), putting together the parts that each own one job: the
 * workspaces (programs/bridge/workspaces.ts), the file backend's locks and pending operations
 * (programs/bridge/stack-locks.ts), unreadable checkpoints (programs/bridge/checkpoint.ts), the orphaned engines
 * of a bridge that died (programs/bridge/orphans.ts), each group's target (programs/bridge/group-targets.ts) with
 * the local target's port slots (programs/bridge/slot-store.ts) or the node a NodePort proxy reports
 * (programs/bridge/node-host-tracker.ts), and cancelling the runs in flight when the bridge stops
 * (programs/bridge/cancellable-runs.ts), and what an implementation follows besides the paths
 * (programs/bridge/target-followers.ts: a kernel path's instance endpoints). One run per group at a time is the work queue's promise
 * (programs/bridge/workqueue.ts); this relies on it.
 */
export class StackRunner implements GroupStacks {
  private readonly workspaces: GroupWorkspaces;
  private readonly locks: StackLocks;
  private readonly slots: SlotStore;
  private readonly targets: GroupTargets;
  private readonly heldOut: HeldOutPorts;
  private readonly nodeHosts: NodeHostTracker;
  private readonly following: TargetFollowers;
  private readonly pathHealth: PathHealthTracker;
  private readonly runs = new CancellableRuns();
  private readonly backendDir: string | undefined;

  constructor(private readonly opts: StackRunnerOptions) {
    this.heldOut = new HeldOutPorts(opts.now ?? Date.now);
    const paths = bridgeStatePaths(opts.stateDir);
    this.backendDir = fileBackendDir(opts.pulumiEnv);
    this.workspaces = new GroupWorkspaces({
      workDir: paths.workspace,
      pulumiEnv: opts.pulumiEnv,
      ...(opts.secretsProvider ? { secretsProvider: opts.secretsProvider } : {}),
    });
    this.locks = new StackLocks({
      backendDir: this.backendDir,
      project: PROJECT,
      ...(opts.leaderElected ? { leaderElected: true } : {}),
    });
    this.slots = new SlotStore({
      file: paths.slots,
      portRange: opts.target.portRange,
      slotSize: opts.slotSize,
      ...(opts.maxPortsPerGroup !== undefined ? { maxPortsPerGroup: opts.maxPortsPerGroup } : {}),
    });
    this.targets = new GroupTargets({ target: opts.target, settings: opts.settings });
    this.nodeHosts = new NodeHostTracker({
      targetOf: (key) => this.targets.kubernetes(key),
      ...(opts.nodes ? { nodes: opts.nodes } : {}),
    });
    const onCluster =
      opts.target.kind === "kubernetes"
        ? { kubeconfig: opts.target.kubeconfig, targetOf: (key: string) => this.targets.kubernetes(key) }
        : undefined;
    this.following = new TargetFollowers(onCluster);
    // On this machine the group's target is the bridge's own (its processes' directories and address).
    this.pathHealth = new PathHealthTracker(onCluster ?? { targetOf: () => opts.target });
  }

  /** Kills the engine processes a previous bridge on this backend left behind. */
  async reapOrphans(log: (pids: number[]) => void): Promise<void> {
    await reapOrphans(this.opts.pulumiEnv.PULUMI_BACKEND_URL ?? "", log);
  }

  /** Groups that still hold a port slot (a stack), e.g. deleted while the bridge was down. */
  slottedGroups(): string[] {
    return this.slots.groups();
  }

  /**
   * Cancels the runs in flight: each engine stops cleanly (checkpoint written, lock released);
   * `releaseCancelled` clears what one could not.
   */
  cancel(): void {
    this.runs.cancel();
  }

  /**
   * After `cancel`, once the runs have ended: a lock on a cancelled group's stack whose process is
   * gone, released now so the next leader finds the stack clean. A cancelled CLI normally releases
   * its lock itself, yet one CI run (2026-11-29) found a lock left after a SIGTERM. How is not
   * established: pulumi v3.259.0 (v3.276.0 alike) takes the lock (pkg/backend/diy/backend.go
   * `Update`, `b.Lock`) before it listens for SIGINT (`apply`'s `CancellationScopes.NewScope`,
   * whose `signal.Notify` in pkg/backend/cancellation_scope.go is the CLI's only handler), but 28
   * SIGINTs sent 0 to 2.5 s after the lock appeared on a small stack never left one. A lock whose
   * process still runs is left alone.
   */
  async releaseCancelled(keys: readonly string[], log: RunOptions["log"]): Promise<void> {
    for (const key of keys) {
      const name = stackName(key);
      const state = this.locks.inspect(name);
      if (state.stale.length === 0) continue;
      const stack = await this.workspaces.stack(key);
      await this.locks.releaseStale(name, stack, log, "a cancelled update whose CLI is gone", state);
    }
  }

  /** Whether a group's proxy would report another node now than the one it was last run with. */
  nodeHostMoved(key: string, hosts: NodePortHosts): boolean {
    return this.nodeHosts.nodeHostMoved(key, hosts);
  }

  /** Whether the group's proxy reports a node the bridge picked (programs/bridge/node-watch.ts watches). */
  picksNodeHostFor(key: string): boolean {
    return this.nodeHosts.picksNodeHostFor(key);
  }

  /** Whether these settings give the group other settings than its last run used. */
  settingsMoved(key: string, settings: BridgeSettings | undefined): boolean {
    return this.targets.settingsMoved(key, settings);
  }

  /** The implementations' followers (one poll each, programs/bridge/controller.ts). */
  followers(): { implementation: string; follower: TargetFollower }[] {
    return this.following.all();
  }

  /** Whether the group's implementation follows it (a kernel path's instance endpoints). */
  followedBy(key: string, follower: TargetFollower): boolean {
    return this.following.of(key) === follower;
  }

  /**
   * The Kubernetes objects the group's stack holds, as `Kind/name` (after a run: what it keeps),
   * read from its checkpoint; so a deletion seen during the run tells the run's own (an object
   * it replaced or removed) from someone else's (programs/bridge/controller.ts).
   */
  async stackObjects(key: string): Promise<Set<string>> {
    const stack = await this.workspaces.stack(key);
    const state = (await stack.exportStack()) as {
      deployment?: { resources?: { type: string; outputs?: { metadata?: { name?: unknown } } }[] };
    };
    const held = new Set<string>();
    for (const r of state.deployment?.resources ?? []) {
      const kind = kubernetesKind(r.type);
      const name = r.outputs?.metadata?.name;
      if (kind && typeof name === "string") held.add(`${kind}/${name}`);
    }
    return held;
  }

  /** Each path's health from its data path (GroupStacks.health). */
  health(key: string, live: NetworkPathObject[]): Promise<Record<string, PathHealth>> {
    return this.pathHealth.read(key, live);
  }

  /** Whether the group's paths' health is read (programs/bridge/controller.ts polls those). */
  readsHealthOf(key: string): boolean {
    return this.pathHealth.reads(key);
  }

  /** Whether a group's paths' health is other now than its last run wrote. */
  healthMoved(key: string, live: NetworkPathObject[]): Promise<boolean> {
    return this.pathHealth.moved(key, live);
  }

  /** Keeps refused node ports out of the group's plan (GroupStacks.holdOutPorts). */
  holdOutPorts(key: string, ports: number[]): boolean {
    return this.opts.target.kind === "kubernetes" && this.heldOut.add(key, ports);
  }

  /** Forgets a group's stack (after a failed run, so the next one selects it afresh). */
  forget(key: string): void {
    this.workspaces.forget(key);
  }

  async up(key: string, live: NetworkPathObject[], run: RunOptions): Promise<GroupOutputs> {
    // Until this run's health is read, a change of health is this run's to report.
    this.pathHealth.forget(key);
    const { stack, recovered } = await this.prepare(key, run);
    const target = await this.targetFor(key, live, run);
    const result = await this.engineRun(key, stack, run, (signal) =>
      upFromEvents(stack, {
        onEvent: run.onEvent,
        color: "never",
        signal,
        refresh: run.refresh || recovered,
        program: groupProgram(key, live, target),
      }),
    );
    return {
      endpoints: (result.outputs.endpoints?.value ?? {}) as Record<string, PathEndpoint>,
      problems: (result.outputs.problems?.value ?? {}) as Record<string, PathProblem>,
      changes: result.resourceChanges,
    };
  }

  async destroy(key: string, run: RunOptions): Promise<void> {
    const { stack } = await this.prepare(key, run);
    await this.engineRun(key, stack, run, (signal) =>
      stack.destroy({ onEvent: run.onEvent, color: "never", signal }),
    );
    await this.workspaces.remove(key, stack);
    this.nodeHosts.forget(key);
    this.following.forget(key);
    this.pathHealth.forget(key);
    this.targets.forget(key);
    this.slots.release(key);
  }

  /**
   * One cancellable engine run; whether it worked or failed, a lock its engine could not delete
   * is seen to (StackLocks.afterRun reads the CLI's stderr, which a failed run's error carries).
   * The engine gets a temporary directory of its own, removed after the run: the Kubernetes
   * provider leaves a kubeconfig file there on every run (host/automation/engine-tmp.ts).
   */
  private async engineRun<T extends { stderr: string }>(
    key: string,
    stack: Stack,
    run: RunOptions,
    fn: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    let result: T;
    try {
      result = await withEngineTmp(stack.workspace, () => this.runs.run(fn));
    } catch (e) {
      await this.locks.afterRun(stackName(key), stack, (e as Error).message ?? "", run.log);
      throw e;
    }
    await this.locks.afterRun(stackName(key), stack, result.stderr, run.log);
    return result;
  }

  /**
   * Everything before an engine run: a stack another live process works on is refused,
   * checkpoint and all; an unreadable checkpoint is repaired; the stack is selected (once per
   * group); a stale lock is cleared and pending operations dropped.
   */
  private async prepare(key: string, run: RunOptions): Promise<{ stack: Stack; recovered: boolean }> {
    this.runs.throwIfCancelled();
    const name = stackName(key);
    const locks = this.locks.inspect(name);
    if (locks.live.length > 0) throw new Error(`stack ${name} is locked by a running update; retrying later`);
    let recovered = false;
    if (this.backendDir) {
      const plan = recoverCheckpoint(this.backendDir, PROJECT, name);
      if (plan.sidecars.length > 0 || plan.action !== "none") {
        run.onRecovered(plan);
        recovered = true;
        // The workspace may hold the stack as it was: select it again.
        this.workspaces.forget(key);
      }
    }
    await this.targets.readSettings();
    const stack = await this.workspaces.stack(key);
    await this.locks.releaseStale(name, stack, run.log, "an interrupted update", locks);
    return { stack, recovered };
  }

  /**
   * The target the group's program is built with: locally, the command line's with the
   * group's slots' ports; on Kubernetes, the group's settings, for a kernel path its instances'
   * endpoints, and for a NodePort proxy the node it reports.
   */
  private async targetFor(key: string, live: NetworkPathObject[], run: RunOptions): Promise<Target> {
    if (this.opts.target.kind === "local") {
      const ports = this.slots.place(key, portsNeeded(key, live));
      return { ...this.opts.target, portRange: ports.range, reservedPorts: ports.reserved };
    }
    const heldOutPorts = this.heldOut.of(key);
    const target = this.targets.realise(key)!;
    const withBackends = await this.following.realise(key, target, live);
    return this.nodeHosts.realise(
      key,
      heldOutPorts.length > 0 ? { ...withBackends, heldOutPorts } : withBackends,
      run.log,
    );
  }
}
