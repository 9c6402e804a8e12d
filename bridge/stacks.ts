import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { LocalWorkspace, type EngineEvent, type Stack } from "@pulumi/pulumi/automation";
import type { NetworkPathObject, PathEndpoint, PathProblem } from "../lib/bridge/api";
import { pendingOperationCount } from "../lib/bridge/checkpoint";
import { admitConnections, groupNamespace, stackName } from "../lib/bridge/grouping";
import { groupPorts, parseSlots, placeGroup, type GroupPorts, type Slots } from "../lib/bridge/slots";
import { listenerKeys } from "../network/proxy/types";
import { staleLocks, type StackLock } from "../lib/bridge/locks";
import {
  internalConsumers,
  nodeHostMoved,
  nodePortHost,
  picksNodeHost,
  type NodeLike,
  type NodePortHosts,
} from "../lib/bridge/node-host";
import { proxySettingsFor, wireguardSettingsFor, type BridgeSettings } from "../lib/bridge/settings";
import type { CheckpointRecovery } from "../lib/bridge/checkpoint";
import { checkpointPaths, recoverCheckpoint } from "./checkpoint";
import { upFromEvents } from "./engine-run";
import { reapOrphans } from "./orphans";
import { bridgeStatePaths } from "./state-dir";
import { groupProgram, type Target } from "./program";
import { toConnection } from "../network/proxy/bridge-program";

type KubernetesTarget = Extract<Target, { kind: "kubernetes" }>;

export const PROJECT = "klutch-network-paths";

/** What a group's engine run reports. */
export interface GroupOutputs {
  endpoints: Record<string, PathEndpoint>;
  problems: Record<string, PathProblem>;
  changes?: Record<string, number>;
}

/** What the reconciler needs of the stacks (a fake one in its unit tests). */
export interface GroupStacks {
  /** Brings the group's stack in line with its live paths. */
  up(key: string, live: NetworkPathObject[], run: RunOptions): Promise<GroupOutputs>;
  /** Destroys and removes the stack of a group that has no paths left, and frees its ports. */
  destroy(key: string, run: RunOptions): Promise<void>;
}

export interface RunOptions {
  /** Refresh before the update (routed paths re-probe; after a repaired checkpoint). */
  refresh: boolean;
  onEvent: (e: EngineEvent) => void;
  /** Called when the group's checkpoint had to be repaired (lib/bridge/checkpoint.ts). */
  onRecovered: (plan: CheckpointRecovery & { sidecars: string[] }) => void;
  log: (level: "warn", msg: string, fields?: Record<string, unknown>) => void;
}

export interface StackRunnerOptions {
  target: Target;
  stateDir: string;
  pulumiEnv: Record<string, string>;
  secretsProvider?: string;
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
}

/**
 * Owns the groups' Pulumi stacks (controller-runtime has no such seam; it is what a reconciler
 * of an external system needs): one long-lived workspace and Stack per group, created on the
 * group's first run and reused, so a run costs the update alone (the trace measured 1.3–2.5 s
 * per run for `createOrSelectStack` plus `stack export`); the file backend's locks (a stale one
 * cleared, a live one refused), pending operations of an interrupted update, unreadable
 * checkpoints, the orphaned engines of a bridge that died, the local target's port slots, and
 * cancelling the runs in flight when the bridge stops. One run per group at a time is the work
 * queue's promise (bridge/workqueue.ts); this relies on it.
 */
export class StackRunner implements GroupStacks {
  private readonly stacks = new Map<string, Stack>();
  /**
   * One abort controller per engine run in flight (aborting sends `pulumi` SIGINT, on which it
   * stops cleanly). Per run, not one for the bridge: the Automation API adds a listener to the
   * signal on every run and never removes it, so a shared signal would leak one per run.
   */
  private readonly runs = new Set<AbortController>();
  private readonly slotsFile: string;
  private stopped = false;

  constructor(private readonly opts: StackRunnerOptions) {
    fs.mkdirSync(bridgeStatePaths(opts.stateDir).workspace, { recursive: true });
    this.slotsFile = bridgeStatePaths(opts.stateDir).slots;
  }

  private get backendDir(): string | undefined {
    const backend = this.opts.pulumiEnv.PULUMI_BACKEND_URL ?? "";
    return backend.startsWith("file://") ? backend.slice("file://".length) : undefined;
  }

  /** Kills the engine processes a previous bridge on this backend left behind. */
  async reapOrphans(log: (pids: number[]) => void): Promise<void> {
    await reapOrphans(this.opts.pulumiEnv.PULUMI_BACKEND_URL ?? "", log);
  }

  /** Groups that still hold a port slot (a stack), e.g. deleted while the bridge was down. */
  slottedGroups(): string[] {
    return Object.keys(this.readSlots());
  }

  /** Cancels the runs in flight (each engine stops cleanly: checkpoint written, lock released). */
  cancel(): void {
    this.stopped = true;
    for (const run of this.runs) run.abort();
  }

  async up(key: string, live: NetworkPathObject[], run: RunOptions): Promise<GroupOutputs> {
    const { stack, recovered } = await this.prepare(key, run);
    const target = await this.targetFor(key, live, this.lastSettings, run);
    const result = await this.withSignal((signal) =>
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
    await this.withSignal((signal) => stack.destroy({ onEvent: run.onEvent, color: "never", signal }));
    await stack.workspace.removeStack(stack.name);
    this.stacks.delete(key);
    this.realisedNodeHosts.delete(key);
    this.releaseSlot(key);
  }

  private lastSettings: BridgeSettings | undefined;

  /**
   * Everything before an engine run: a stack another live process works on is refused,
   * checkpoint and all; an unreadable checkpoint is repaired; the stack is selected (once per
   * group); a stale lock is cleared and pending operations dropped.
   */
  private async prepare(key: string, run: RunOptions): Promise<{ stack: Stack; recovered: boolean }> {
    if (this.stopped) throw new Error("the bridge is stopping");
    const name = stackName(key);
    const locks = this.locksOf(name);
    if (locks.live.length > 0) throw new Error(`stack ${name} is locked by a running update; retrying later`);
    let recovered = false;
    const root = this.backendDir;
    if (root) {
      const plan = recoverCheckpoint(root, PROJECT, name);
      if (plan.sidecars.length > 0 || plan.action !== "none") {
        run.onRecovered(plan);
        recovered = true;
        // The workspace may hold the stack as it was: select it again.
        this.stacks.delete(key);
      }
    }
    if (this.opts.target.kind === "kubernetes") this.lastSettings = await this.opts.settings();
    const stack = await this.stack(key);
    if (locks.stale.length > 0) {
      run.log("warn", "clearing the lock of an interrupted update", { locks: locks.stale.map((l) => l.pid) });
      await stack.cancel();
    }
    await this.clearPendingOperations(key, stack, run);
    return { stack, recovered };
  }

  private async stack(key: string): Promise<Stack> {
    const cached = this.stacks.get(key);
    if (cached) return cached;
    const stack = await LocalWorkspace.createOrSelectStack(
      {
        stackName: stackName(key),
        projectName: PROJECT,
        // Each run passes the program of the group's paths at that time (stack.up's `program`).
        program: () => Promise.reject(new Error("no program given for this run")),
      },
      {
        workDir: bridgeStatePaths(this.opts.stateDir).workspace,
        envVars: this.opts.pulumiEnv,
        projectSettings: { name: PROJECT, runtime: "nodejs" },
        ...(this.opts.secretsProvider ? { secretsProvider: this.opts.secretsProvider } : {}),
      },
    );
    this.stacks.set(key, stack);
    return stack;
  }

  /** Forgets a group's stack (after a failed run, so the next one selects it afresh). */
  forget(key: string): void {
    this.stacks.delete(key);
  }

  private async withSignal<T>(fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const abort = new AbortController();
    this.runs.add(abort);
    try {
      // A cancel between `prepare`'s check and here aborted nothing of this run: it never starts.
      // (One that lands inside `stack.up` before the CLI is spawned is not seen by the Automation
      // API, which listens for "abort" only once the process runs: that update completes, and
      // the bridge's SIGTERM handler waits for it like for any run in flight.)
      if (this.stopped) throw new Error("the bridge is stopping");
      return await fn(abort.signal);
    } finally {
      this.runs.delete(abort);
    }
  }

  private async targetFor(
    key: string,
    live: NetworkPathObject[],
    settings: BridgeSettings | undefined,
    run: RunOptions,
  ): Promise<Target> {
    if (this.opts.target.kind === "local") {
      const ports = this.portsFor(key, live);
      return { ...this.opts.target, portRange: ports.range, reservedPorts: ports.reserved };
    }
    const target = this.kubernetesTarget(key, settings)!;
    if (!this.picksNodeHost(target)) return target;
    const nodeHost = await this.pickNodeHost(internalConsumers(target), run);
    this.realisedNodeHosts.set(key, nodeHost);
    return nodeHost ? { ...target, nodeHost } : target;
  }

  /** The node host each NodePort group was last run with (bridge/node-watch.ts compares). */
  private readonly realisedNodeHosts = new Map<string, string | undefined>();

  /**
   * Whether a group's proxy would report another node now than the one it was last run with.
   * A group not run yet is queued by the cache anyway.
   */
  nodeHostMoved(key: string, hosts: NodePortHosts): boolean {
    const target = this.kubernetesTarget(key, this.lastSettings);
    if (!target || !this.picksNodeHost(target) || !this.realisedNodeHosts.has(key)) return false;
    return nodeHostMoved(this.realisedNodeHosts.get(key), hosts, internalConsumers(target));
  }

  /** The kubernetes target of a group: the command line's, overlaid with its namespace's settings. */
  private kubernetesTarget(key: string, settings: BridgeSettings | undefined): KubernetesTarget | undefined {
    if (this.opts.target.kind !== "kubernetes") return undefined;
    const wireguard = wireguardSettingsFor(settings, groupNamespace(key));
    return {
      ...this.opts.target,
      ...proxySettingsFor(settings, groupNamespace(key)),
      ...(wireguard ? { wireguard } : {}),
    };
  }

  /** A NodePort proxy whose host the bridge picks from the nodes (no --node-host). */
  private picksNodeHost(target: KubernetesTarget): boolean {
    return picksNodeHost(target) && this.opts.nodes !== undefined;
  }

  /**
   * Whether the group's proxy reports a node the bridge picked, as of the settings last read:
   * such groups run again when the nodes change (bridge/node-watch.ts).
   */
  picksNodeHostFor(key: string): boolean {
    const target = this.kubernetesTarget(key, this.lastSettings);
    return target !== undefined && this.picksNodeHost(target);
  }

  /**
   * A node address for a NodePort group's consumers, read on each run (nodes come and go).
   * Without one (no Ready node, or the nodes cannot be listed) the proxy reports its Service's
   * cluster DNS name, as before, and the log says why.
   */
  private async pickNodeHost(internal: boolean, run: RunOptions): Promise<string | undefined> {
    try {
      const host = nodePortHost(await this.opts.nodes!(), internal);
      if (!host) run.log("warn", "no Ready node with an address for the NodePort proxy's consumers");
      return host;
    } catch (e) {
      run.log("warn", "cannot list the data plane's nodes for the NodePort proxy's consumers", {
        error: (e as Error).message,
      });
      return undefined;
    }
  }

  /**
   * A bridge killed during an update leaves the operations it had started recorded as
   * pending, and the next update refuses to run. The providers here are idempotent (a
   * re-created proxy takes over the pid file, ports come from state), so the pending
   * entries are dropped and the next up re-creates whatever they were doing. The file
   * backend's checkpoint is read directly; only when it records some (or cannot be read)
   * is the stack exported and imported through the engine.
   */
  private async clearPendingOperations(key: string, stack: Stack, run: RunOptions): Promise<void> {
    const root = this.backendDir;
    if (root) {
      let text: string | undefined;
      try {
        text = fs.readFileSync(checkpointPaths(root, PROJECT, stackName(key)).file, "utf8");
      } catch {
        // A new stack has no checkpoint yet: nothing pending.
        return;
      }
      if (pendingOperationCount(text) === 0) return;
    }
    const state = await stack.exportStack();
    const deployment = state.deployment as { pending_operations?: unknown[] } | undefined;
    if (!deployment?.pending_operations?.length) return;
    run.log("warn", "clearing pending operations of an interrupted update", {
      count: deployment.pending_operations.length,
    });
    deployment.pending_operations = [];
    await stack.importStack(state);
  }

  /**
   * The file-backend locks of a stack: a lock whose pulumi process is gone (the bridge was
   * killed mid-update) is stale and cleared with `pulumi cancel`; a lock held by a live
   * process makes the reconcile fail and retry later, so two updates never run on one stack.
   */
  private locksOf(stack: string): { live: StackLock[]; stale: StackLock[] } {
    const root = this.backendDir;
    if (!root) return { live: [], stale: [] };
    const dir = path.join(root, ".pulumi", "locks", "organization", PROJECT, stack);
    if (!fs.existsSync(dir)) return { live: [], stale: [] };
    // The backend keeps a `.attrs` file next to each lock; only the `.json` files are locks.
    const locks = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith(".json"))
      .map((f) => {
        const file = path.join(dir, f);
        try {
          const j = JSON.parse(fs.readFileSync(file, "utf8")) as { pid?: number; hostname?: string };
          return { file, pid: j.pid, hostname: j.hostname };
        } catch {
          return { file };
        }
      });
    const stale = staleLocks(locks, os.hostname(), (pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    });
    return { live: locks.filter((l) => !stale.includes(l)), stale };
  }

  private readSlots(): Slots {
    try {
      return parseSlots(fs.readFileSync(this.slotsFile, "utf8"));
    } catch {
      return {};
    }
  }

  private writeSlots(slots: Slots): void {
    fs.writeFileSync(`${this.slotsFile}.tmp`, JSON.stringify(slots));
    fs.renameSync(`${this.slotsFile}.tmp`, this.slotsFile);
  }

  /** The group's slots' ports, grown to what its connections need (plus HAProxy's two own listeners). */
  private portsFor(key: string, live: NetworkPathObject[]): GroupPorts {
    const target = this.opts.target;
    const size = this.opts.slotSize;
    const slots = this.readSlots();
    const maxSlots = Math.floor((target.portRange.to - target.portRange.from + 1) / size);
    const ports = listenerKeys(admitConnections(live.map(toConnection)).admitted).length + 2;
    const blocks = placeGroup(slots, key, ports, {
      slotSize: size,
      maxSlots,
      maxSlotsPerGroup: Math.max(1, Math.floor((this.opts.maxPortsPerGroup ?? maxSlots * size) / size)),
    });
    if (JSON.stringify(slots[key]) !== JSON.stringify(blocks)) this.writeSlots({ ...slots, [key]: blocks });
    return groupPorts(target.portRange, blocks, size);
  }

  private releaseSlot(key: string): void {
    const slots = this.readSlots();
    if (slots[key] === undefined) return;
    delete slots[key];
    this.writeSlots(slots);
  }
}
