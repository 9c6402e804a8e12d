import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as k8s from "@kubernetes/client-node";
import { LocalWorkspace, type EngineEvent, type Stack } from "@pulumi/pulumi/automation";
import {
  BRIDGE_FINALIZER,
  NETWORK_PATH_GROUP,
  NETWORK_PATH_PLURAL,
  NETWORK_PATH_VERSION,
  assignSlot,
  backoffDelay,
  failedStatus,
  groupKey,
  groupNamespace,
  hasFinalizer,
  isManaged,
  needsReconcile,
  realisationOf,
  unsupportedImplementation,
  staleLocks,
  pathId,
  planGroup,
  problemStatus,
  readyStatus,
  statusEvent,
  sameStatus,
  slotRange,
  stackName,
  type Endpoint,
  type NetworkPathObject,
  type PathProblem,
  type StackLock,
} from "../lib/bridge/model";
import { EngineDiagnostics } from "../lib/bridge/diagnostics";
import type { BridgeMetrics } from "../lib/bridge/metrics";
import {
  SETTINGS_KEY,
  parseBridgeSettings,
  proxySettingsFor,
  type BridgeSettings,
} from "../lib/bridge/settings";
import { recoverCheckpoint } from "./checkpoint";
import { EventRecorder } from "./events";
import type { Logger } from "./log";
import { reapOrphans } from "./orphans";
import { groupProgram, type Target } from "./program";

/** How soon a routed group whose probe failed is probed again. */
const PROBE_RETRY_MS = 15_000;

export interface BridgeOptions {
  kubeconfig: string;
  target: Target;
  /** Directory for the bridge's workspace, slots and (by default) its Pulumi state. */
  stateDir: string;
  /** Environment for the Pulumi CLI (backend URL, passphrase, PATH). */
  pulumiEnv: Record<string, string>;
  /** Secrets provider of new stacks (e.g. awskms://…); the passphrase provider when unset. */
  secretsProvider?: string;
  /** The settings ConfigMap the environment stack writes (lib/bridge/settings.ts); none when unset. */
  settings?: { namespace: string; name: string };
  concurrency: number;
  /** Ports per group for the local target. */
  slotSize: number;
  log: Logger;
  metrics: BridgeMetrics;
}

const PROJECT = "klutch-network-paths";

/**
 * The Crossplane bridge: watches NetworkPaths (what the Pulumi-backed compositions
 * compose), realises each group's paths by running its Pulumi program through the
 * Automation API, and writes hostForConsumer, port and Ready/Synced conditions back.
 * Level-triggered: every reconcile recomputes a group's stack from the objects, so a
 * restart at any point converges.
 */
export class Bridge {
  private readonly kc = new k8s.KubeConfig();
  private readonly api: k8s.CustomObjectsApi;
  private readonly core: k8s.CoreV1Api;
  private readonly cache = new Map<string, NetworkPathObject>();
  private readonly dirty = new Set<string>();
  private readonly running = new Set<string>();
  private readonly attempts = new Map<string, number>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private watchAbort?: AbortController;
  private watching = false;
  private stopped = false;
  private readonly slotsFile: string;
  private readonly events: EventRecorder;
  /**
   * One abort controller per engine run in flight (aborting sends `pulumi` SIGINT, on which it
   * stops cleanly). Per run, not one for the bridge: the Automation API adds a listener to the
   * signal on every run and never removes it, so a shared signal would leak one per run.
   */
  private readonly runs = new Set<AbortController>();
  /** Reconciles in flight, so stop() can wait for them. */
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly opts: BridgeOptions) {
    this.kc.loadFromFile(opts.kubeconfig);
    this.api = this.kc.makeApiClient(k8s.CustomObjectsApi);
    this.core = this.kc.makeApiClient(k8s.CoreV1Api);
    this.events = new EventRecorder(this.kc, opts.log);
    fs.mkdirSync(path.join(opts.stateDir, "workspace"), { recursive: true });
    this.slotsFile = path.join(opts.stateDir, "slots.json");
  }

  healthy(): boolean {
    return this.watching;
  }

  async start(): Promise<void> {
    await reapOrphans(this.opts.pulumiEnv.PULUMI_BACKEND_URL ?? "", (pids) =>
      this.opts.log("warn", "killing engine processes a previous bridge left behind", { pids }),
    );
    // The control plane may be down or restarting when the bridge starts: keep trying.
    let resourceVersion: string | undefined;
    for (let attempt = 1; ; attempt++) {
      try {
        resourceVersion = await this.relist();
        break;
      } catch (e) {
        if (this.stopped) return;
        const delay = backoffDelay(attempt, 500, 10_000);
        this.opts.log("warn", "cannot list network paths yet", {
          error: (e as Error).message,
          retryInMs: delay,
        });
        await sleep(delay);
      }
    }
    // Groups that have a stack but no paths any more (deleted while the bridge was down).
    for (const key of Object.keys(this.readSlots())) this.enqueue(key);
    void this.watchLoop(resourceVersion);
  }

  /**
   * Stops taking work, cancels the engine runs in flight and waits (up to `timeoutMs`) for
   * them to end. The Automation API's abort signal sends `pulumi` SIGINT, on which the engine
   * lets running resource operations finish, writes its checkpoint and releases the stack
   * lock, so the next leader finds a clean stack instead of one it must repair. Only after
   * this may the caller release the leader lease (scripts/bridge.ts): a successor must not
   * start while this process's engines still write.
   */
  async stop(timeoutMs = 20_000): Promise<void> {
    this.stopped = true;
    this.watchAbort?.abort();
    for (const t of this.timers.values()) clearTimeout(t);
    for (const run of this.runs) run.abort();
    if (this.inFlight.size === 0) return;
    const all = Promise.allSettled([...this.inFlight]).then(() => true);
    const ended = await Promise.race([all, sleep(timeoutMs).then(() => false)]);
    this.opts.log(ended ? "info" : "warn", ended ? "engine runs cancelled" : "engine runs still running", {
      groups: [...this.running],
    });
  }

  /** Lists every NetworkPath, replaces the cache and queues every group. */
  private async relist(): Promise<string | undefined> {
    const list = (await this.api.listClusterCustomObject({
      group: NETWORK_PATH_GROUP,
      version: NETWORK_PATH_VERSION,
      plural: NETWORK_PATH_PLURAL,
    })) as { items: NetworkPathObject[]; metadata?: { resourceVersion?: string } };
    this.cache.clear();
    const managed = list.items.filter(isManaged);
    for (const item of managed) this.cache.set(pathId(item), item);
    for (const item of managed) this.enqueue(groupKey(item));
    this.opts.log("info", "listed network paths", {
      count: managed.length,
      ignored: list.items.length - managed.length,
    });
    return list.metadata?.resourceVersion;
  }

  private async watchLoop(resourceVersion: string | undefined): Promise<void> {
    let rv = resourceVersion;
    while (!this.stopped) {
      try {
        await new Promise<void>((resolve, reject) => {
          const watch = new k8s.Watch(this.kc);
          void watch
            .watch(
              `/apis/${NETWORK_PATH_GROUP}/${NETWORK_PATH_VERSION}/${NETWORK_PATH_PLURAL}`,
              { allowWatchBookmarks: true, ...(rv ? { resourceVersion: rv } : {}) },
              (type: string, obj: NetworkPathObject & { metadata: { resourceVersion?: string } }) => {
                if (obj?.metadata?.resourceVersion) rv = obj.metadata.resourceVersion;
                if (type === "BOOKMARK") return;
                if (type === "ERROR") return reject(new Error(`watch error: ${JSON.stringify(obj)}`));
                this.watching = true;
                if (!isManaged(obj)) return;
                const previous = this.cache.get(pathId(obj));
                if (type === "DELETED") this.cache.delete(pathId(obj));
                else this.cache.set(pathId(obj), obj);
                if (type === "DELETED" || needsReconcile(previous, obj)) this.enqueue(groupKey(obj));
              },
              (err: unknown) => (err ? reject(err as Error) : resolve()),
            )
            .then((abort) => {
              this.watchAbort = abort;
              this.watching = true;
            }, reject);
        });
      } catch (e) {
        this.watching = false;
        if (this.stopped) return;
        this.opts.log("warn", "watch ended; listing again", { error: (e as Error).message });
        await sleep(1000);
        try {
          rv = await this.relist();
        } catch (err) {
          this.opts.log("error", "list failed", { error: (err as Error).message });
          rv = undefined;
        }
      }
    }
  }

  private enqueue(key: string, delayMs = 0): void {
    if (this.stopped) return;
    if (delayMs > 0) {
      if (this.timers.has(key)) return;
      this.timers.set(
        key,
        setTimeout(() => {
          this.timers.delete(key);
          this.enqueue(key);
        }, delayMs),
      );
      return;
    }
    this.dirty.add(key);
    this.opts.metrics.setQueueDepth(this.dirty.size);
    this.pump();
  }

  /** Starts queued groups up to the concurrency limit; a group never runs twice at once. */
  private pump(): void {
    if (this.stopped) return;
    for (const key of [...this.dirty]) {
      if (this.running.size >= this.opts.concurrency) return;
      if (this.running.has(key)) continue;
      this.dirty.delete(key);
      this.running.add(key);
      this.opts.metrics.setQueueDepth(this.dirty.size);
      const run: Promise<void> = this.reconcile(key)
        .catch((e: Error) => this.opts.log("error", "reconcile crashed", { group: key, error: e.message }))
        .finally(() => {
          this.inFlight.delete(run);
          this.running.delete(key);
          this.pump();
        });
      this.inFlight.add(run);
    }
  }

  private async reconcile(key: string): Promise<void> {
    const started = Date.now();
    const paths = [...this.cache.values()].filter((p) => groupKey(p) === key);
    const { live, releasing } = planGroup(paths);
    const log = (level: Parameters<Logger>[0], msg: string, f: Record<string, unknown> = {}) =>
      this.opts.log(level, msg, { group: key, ...f });
    const realisation = realisationOf(
      live[0]?.spec.implementation ?? releasing[0]?.spec.implementation ?? "",
    );
    if (paths.length > 0 && realisation === undefined) {
      // Nothing of ours to build or clean up: say so on each path and let deletions through.
      const implementation = (paths[0] as NetworkPathObject).spec.implementation;
      const now = new Date().toISOString();
      for (const p of live) {
        await this.writeStatus(p, failedStatus(p, unsupportedImplementation(implementation), now)).catch(
          (err: Error) => log("warn", "could not write status", { path: pathId(p), error: err.message }),
        );
      }
      for (const p of releasing) await this.removeFinalizer(p);
      this.opts.metrics.recordReconcile("error", (Date.now() - started) / 1000);
      log("error", "unsupported implementation", { implementation });
      return;
    }
    const diagnostics = new EngineDiagnostics();
    const abort = new AbortController();
    this.runs.add(abort);
    const engineOpts = {
      // The cause of a failure comes from the engine's events (lib/bridge/diagnostics.ts).
      onEvent: (e: EngineEvent) => diagnostics.onEvent(e),
      color: "never" as const,
      signal: abort.signal,
    };
    try {
      for (const p of live) if (!hasFinalizer(p)) await this.addFinalizer(p);
      // A stack another live process works on is left alone, checkpoint and all.
      const locks = this.locksOf(stackName(key));
      if (locks.live.length > 0)
        throw new Error(`stack ${stackName(key)} is locked by a running update; retrying later`);
      const recovered = this.recoverCheckpoint(key, live, log);
      const stack = await this.stack(key, live);
      if (locks.stale.length > 0) {
        log("warn", "clearing the lock of an interrupted update", { locks: locks.stale.map((l) => l.pid) });
        await stack.cancel();
      }
      await this.clearPendingOperations(stack, log);
      let endpoints: Record<string, Endpoint> = {};
      let problems: Record<string, PathProblem> = {};
      if (this.stopped) return;
      if (live.length > 0) {
        this.opts.metrics.recordEngineRun();
        // Routed paths are probes: refresh re-probes them, so an instance that came up (or
        // went away) since the last run is reported as it is now. After a checkpoint was
        // restored from an older copy (or re-created), refresh brings the state in line with
        // what really runs before the update.
        const result = await stack.up({
          ...engineOpts,
          refresh: realisation === "routed" || realisation === "forwarded" || recovered,
        });
        endpoints = (result.outputs.endpoints?.value ?? {}) as Record<string, Endpoint>;
        problems = (result.outputs.problems?.value ?? {}) as Record<string, PathProblem>;
        log("info", "network paths up", {
          paths: live.length,
          changes: result.summary.resourceChanges,
          ...(Object.keys(problems).length > 0 ? { notRealised: Object.keys(problems).length } : {}),
        });
      } else {
        this.opts.metrics.recordEngineRun();
        await stack.destroy(engineOpts);
        await stack.workspace.removeStack(stack.name);
        this.releaseSlot(key);
        log("info", "group has no paths; stack destroyed");
      }
      const now = new Date().toISOString();
      const notRealised: Record<string, number> = {};
      for (const p of live) {
        const endpoint = endpoints[pathId(p)];
        const problem = problems[pathId(p)];
        if (!endpoint && !problem) throw new Error(`the program reported no endpoint for ${pathId(p)}`);
        if (problem) notRealised[problem.reason] = (notRealised[problem.reason] ?? 0) + 1;
        const status = endpoint
          ? readyStatus(p, endpoint, now)
          : problemStatus(p, problem as PathProblem, now);
        if (!sameStatus(p.status, status)) {
          await this.writeStatus(p, status);
          // An Event per changed outcome: a group's 100 unchanged paths stay quiet.
          const ev = statusEvent(status);
          void this.events.record(p, ev.type, ev.reason, ev.message);
        }
      }
      this.opts.metrics.setPathsNotRealised(key, notRealised);
      for (const p of releasing) {
        await this.removeFinalizer(p);
        void this.events.record(p, "Normal", "Released", `network path of group ${key} removed`);
      }
      this.attempts.delete(key);
      if (live.some((p) => endpoints[pathId(p)]?.probe?.ready === false)) {
        this.enqueue(key, PROBE_RETRY_MS);
      }
      this.opts.metrics.recordReconcile("success", (Date.now() - started) / 1000);
    } catch (e) {
      // Cancelled because the bridge stops: nothing failed, and the next leader carries on.
      if (this.stopped) {
        log("info", "reconcile cancelled; the bridge is stopping");
        return;
      }
      const message = engineError(e as Error, diagnostics);
      const attempt = (this.attempts.get(key) ?? 0) + 1;
      this.attempts.set(key, attempt);
      const delay = backoffDelay(attempt);
      this.opts.metrics.recordReconcile("error", (Date.now() - started) / 1000);
      log("error", "reconcile failed", { attempt, retryInMs: delay, error: message });
      const now = new Date().toISOString();
      for (const p of live) {
        await this.writeStatus(p, failedStatus(p, message, now)).catch((err: Error) =>
          log("warn", "could not write status", { path: pathId(p), error: err.message }),
        );
        // Repeats of the same error only bump the Event's count (bridge/events.ts).
        void this.events.record(p, "Warning", "ReconcileError", message);
      }
      this.enqueue(key, delay);
    } finally {
      this.runs.delete(abort);
    }
  }

  /**
   * Repairs the group's checkpoint before the stack is selected, when it does not parse (file
   * backend only; see lib/bridge/checkpoint.ts for where the backend keeps it and why an
   * older copy is safe). Says so in the log, the metrics and an Event on each live path.
   * Returns whether it repaired anything (the run then refreshes).
   */
  private recoverCheckpoint(
    key: string,
    live: NetworkPathObject[],
    log: (l: "warn", m: string, f?: Record<string, unknown>) => void,
  ): boolean {
    const backend = this.opts.pulumiEnv.PULUMI_BACKEND_URL ?? "";
    if (!backend.startsWith("file://")) return false;
    const plan = recoverCheckpoint(backend.slice("file://".length), PROJECT, stackName(key));
    if (plan.sidecars.length > 0) {
      this.opts.metrics.recordCheckpointRecovery("sidecar");
      const files = plan.sidecars.map((f) => path.basename(f));
      log("warn", "removed unreadable metadata files of the file backend", { files });
      for (const p of live)
        void this.events.record(
          p,
          "Warning",
          "CheckpointRepaired",
          `removed unreadable metadata of the stack of group ${key} (${files.join(", ")}), left empty by an interrupted write; the stack is read without it`,
        );
    }
    if (plan.action === "none") return plan.sidecars.length > 0;
    this.opts.metrics.recordCheckpointRecovery(plan.action);
    const message =
      plan.action === "restore"
        ? `the stack checkpoint of group ${key} was unreadable (${plan.problem}); restored the previous one from ${path.basename(plan.from)}, and this run refreshes`
        : `the stack checkpoint of group ${key} was unreadable (${plan.problem}) and no usable older copy exists; the stack is created anew and its resources adopted or re-created`;
    log("warn", "repaired an unreadable checkpoint", {
      action: plan.action,
      problem: plan.problem,
      ...(plan.action === "restore" ? { from: plan.from } : {}),
    });
    const reason = plan.action === "restore" ? "CheckpointRestored" : "CheckpointRecreated";
    for (const p of live) void this.events.record(p, "Warning", reason, message);
    return true;
  }

  /**
   * The environment's settings for the bridge (per consumer namespace: the app cluster's
   * network connector), read on every reconcile so a changed stack takes effect at the
   * next one. Absent settings mean the command-line defaults; malformed ones fail the
   * reconcile with the field named.
   */
  private async readSettings(): Promise<BridgeSettings | undefined> {
    const ref = this.opts.settings;
    if (!ref) return undefined;
    try {
      const cm = await this.core.readNamespacedConfigMap({ name: ref.name, namespace: ref.namespace });
      const text = cm.data?.[SETTINGS_KEY];
      return text ? parseBridgeSettings(text) : undefined;
    } catch (e) {
      if ((e as { code?: number }).code === 404) return undefined;
      throw e;
    }
  }

  private async stack(key: string, live: NetworkPathObject[]): Promise<Stack> {
    const target: Target =
      this.opts.target.kind === "local"
        ? { ...this.opts.target, portRange: this.portRangeFor(key) }
        : { ...this.opts.target, ...proxySettingsFor(await this.readSettings(), groupNamespace(key)) };
    return LocalWorkspace.createOrSelectStack(
      { stackName: stackName(key), projectName: PROJECT, program: groupProgram(key, live, target) },
      {
        workDir: path.join(this.opts.stateDir, "workspace"),
        envVars: this.opts.pulumiEnv,
        projectSettings: { name: PROJECT, runtime: "nodejs" },
        ...(this.opts.secretsProvider ? { secretsProvider: this.opts.secretsProvider } : {}),
      },
    );
  }

  /**
   * A bridge killed during an update leaves the operations it had started recorded as
   * pending, and the next update refuses to run. The providers here are idempotent (a
   * re-created proxy takes over the pid file, ports come from state), so the pending
   * entries are dropped and the next up re-creates whatever they were doing.
   */
  private async clearPendingOperations(
    stack: Stack,
    log: (l: "warn", m: string, f?: Record<string, unknown>) => void,
  ) {
    const state = await stack.exportStack();
    const deployment = state.deployment as { pending_operations?: unknown[] } | undefined;
    if (!deployment?.pending_operations?.length) return;
    log("warn", "clearing pending operations of an interrupted update", {
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
    const backend = this.opts.pulumiEnv.PULUMI_BACKEND_URL ?? "";
    if (!backend.startsWith("file://")) return { live: [], stale: [] };
    const dir = path.join(
      backend.slice("file://".length),
      ".pulumi",
      "locks",
      "organization",
      PROJECT,
      stack,
    );
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

  private readSlots(): Record<string, number> {
    try {
      return JSON.parse(fs.readFileSync(this.slotsFile, "utf8")) as Record<string, number>;
    } catch {
      return {};
    }
  }

  private portRangeFor(key: string): { from: number; to: number } {
    const target = this.opts.target;
    const slots = this.readSlots();
    const max = Math.floor((target.portRange.to - target.portRange.from + 1) / this.opts.slotSize);
    const slot = assignSlot(slots, key, max);
    if (slots[key] === undefined) {
      fs.writeFileSync(`${this.slotsFile}.tmp`, JSON.stringify({ ...slots, [key]: slot }));
      fs.renameSync(`${this.slotsFile}.tmp`, this.slotsFile);
    }
    return slotRange(target.portRange, slot, this.opts.slotSize);
  }

  private releaseSlot(key: string): void {
    const slots = this.readSlots();
    if (slots[key] === undefined) return;
    delete slots[key];
    fs.writeFileSync(`${this.slotsFile}.tmp`, JSON.stringify(slots));
    fs.renameSync(`${this.slotsFile}.tmp`, this.slotsFile);
  }

  private patchOptions() {
    return k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch);
  }

  private async addFinalizer(p: NetworkPathObject): Promise<void> {
    const finalizers = [...(p.metadata.finalizers ?? []), BRIDGE_FINALIZER];
    await this.api.patchClusterCustomObject(
      {
        group: NETWORK_PATH_GROUP,
        version: NETWORK_PATH_VERSION,
        plural: NETWORK_PATH_PLURAL,
        name: p.metadata.name,
        body: { metadata: { finalizers, resourceVersion: p.metadata.resourceVersion } },
      },
      this.patchOptions(),
    );
  }

  private async removeFinalizer(p: NetworkPathObject): Promise<void> {
    const finalizers = (p.metadata.finalizers ?? []).filter((f) => f !== BRIDGE_FINALIZER);
    // Already gone (released by an earlier reconcile whose DELETED event has not arrived yet):
    // nothing left to let go, and no reason to fail the group's reconcile.
    const gone = (e: unknown) => {
      if ((e as { code?: number }).code === 404) return;
      throw e;
    };
    await this.api
      .patchClusterCustomObject(
        {
          group: NETWORK_PATH_GROUP,
          version: NETWORK_PATH_VERSION,
          plural: NETWORK_PATH_PLURAL,
          name: p.metadata.name,
          body: { metadata: { finalizers, resourceVersion: p.metadata.resourceVersion } },
        },
        this.patchOptions(),
      )
      .catch(gone);
    this.opts.log("info", "released network path", { path: pathId(p) });
  }

  private async writeStatus(
    p: NetworkPathObject,
    status: NonNullable<NetworkPathObject["status"]>,
  ): Promise<void> {
    await this.api.patchClusterCustomObjectStatus(
      {
        group: NETWORK_PATH_GROUP,
        version: NETWORK_PATH_VERSION,
        plural: NETWORK_PATH_PLURAL,
        name: p.metadata.name,
        // A merge patch keeps fields it does not name: a path that lost its port says so.
        body: { status: { hostForConsumer: null, port: null, ...status } },
      },
      this.patchOptions(),
    );
  }
}

/**
 * The message of a failed engine run: the engine's diagnostics (each failed resource's type,
 * name, operation and message) when it reported any, else the error's last lines (a failure
 * before the engine ran, e.g. a locked stack or an unreachable API server).
 */
export function engineError(e: Error, diagnostics: EngineDiagnostics): string {
  const summary = diagnostics.summary();
  if (summary) return summary;
  return e.message.split("\n").filter(Boolean).slice(-8).join("\n");
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
