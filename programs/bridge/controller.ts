import * as k8s from "@kubernetes/client-node";
import type { BridgeMetrics } from "./metrics";
import { PathCache, networkPathInformer, type PathInformer } from "./cache";
import { dataPlaneNodes } from "./data-plane-nodes";
import { KubePathWriter } from "./client";
import { EventRecorder } from "./events";
import { loadKubeConfig } from "./kubeconfig";
import type { Logger } from "./log";
import type { BridgeSettings } from "../../lib/bridge/settings";
import type { Target } from "./program";
import { NodeHostWatch, PollingWatch } from "./node-watch";
import { GroupReconciler } from "./reconciler";
import { StackRunner } from "./stack-runner";
import { WorkQueue } from "./workqueue";
import type { DriftInformer } from "./drift-watch";
import type { DriftKind } from "../../lib/bridge/drift";
import { clientErrorMessage } from "../../lib/kube/client-errors";
import { DriftHealing } from "./drift-healing";
import { reportUnusable } from "./health-report";
import type { NetworkPathObject } from "../../lib/bridge/api";
import {
  InstanceWatch,
  dataPlaneSliceInformer,
  instanceServiceKey,
  type SliceInformer,
} from "./instance-watch";

export { engineError } from "./reconciler";

export interface BridgeOptions {
  /** The control plane's kubeconfig file; in-cluster config when undefined (programs/bridge/kubeconfig.ts). */
  kubeconfig: string | undefined;
  target: Target;
  /** Directory for the bridge's workspace, slots and (by default) its Pulumi state. */
  stateDir: string;
  /** Environment for the Pulumi CLI (backend URL, passphrase, PATH). */
  pulumiEnv: Record<string, string>;
  /** Secrets provider of new stacks (e.g. awskms://…); the passphrase provider when unset. */
  secretsProvider?: string;
  /** It reconciles only while it holds the leader lease (`--leader-elect`). */
  leaderElected?: boolean;
  /** The settings ConfigMap the environment stack writes (lib/bridge/settings.ts); none when unset. */
  settings?: { namespace: string; name: string };
  concurrency: number;
  /** Ports per slot for the local target (lib/bridge/slots.ts). */
  slotSize: number;
  /** The most ports one group may hold (local target); the whole port range when unset. */
  maxPortsPerGroup?: number;
  log: Logger;
  metrics: BridgeMetrics;
  /** The NetworkPath informer; client-node's by default. */
  informer?: PathInformer;
  /** The data plane's drift informers (kubernetes target); client-node's by default. */
  driftInformers?: Record<DriftKind, DriftInformer>;
  /** The data-service cluster's EndpointSlice informer (kubernetes target); client-node's by default. */
  sliceInformer?: SliceInformer;
  /** How often the paths' health is read while some group's is (ms). */
  healthPollMs?: number;
  /** How often the data plane's nodes are listed while a NodePort proxy reports one (ms). */
  nodePollMs?: number;
  /** How often a kernel path's instance endpoints are read again (ms). */
  endpointsPollMs?: number;
  /** How often the environment's settings are read between runs (ms). */
  settingsPollMs?: number;
}

/**
 * The Crossplane bridge: watches NetworkPaths (what the Pulumi-backed compositions compose),
 * realises each group's paths by running its Pulumi program through the Automation API, and
 * writes hostForConsumer, port and Ready/Synced conditions back. Wired along
 * controller-runtime's seams, each testable without a process:
 * - the list/watch cache (programs/bridge/cache.ts, client-node's informer) queues a group at once
 *   on each event that calls for it;
 * - the work queue (programs/bridge/workqueue.ts): one run per group at a time, a concurrency
 *   limit, per-key backoff, requeue-after;
 * - the reconciler (programs/bridge/reconciler.ts): one group from the cache to its stack and its
 *   paths' status, returning when to run again or a (terminal) error;
 * - the stack runner (programs/bridge/stack-runner.ts): workspaces, locks, pending operations, checkpoints,
 *   orphans, port slots, cancellation;
 * - the writer (programs/bridge/client.ts): finalizers, status, the nudge to Crossplane.
 */
export class Bridge {
  private readonly kc: k8s.KubeConfig;
  private readonly cache: PathCache;
  private readonly queue: WorkQueue;
  private readonly stacks: StackRunner;
  /** Re-runs NodePort groups whose node moved (kubernetes target). */
  private readonly nodeWatch: NodeHostWatch | undefined;
  /**
   * Re-runs groups whose followed reads moved (kubernetes target), one poll per implementation
   * that follows something (programs/bridge/target-followers.ts: a kernel path's instance endpoints).
   */
  private readonly followerWatches: PollingWatch<string[]>[];
  /** Re-runs groups whose paths' health changed (the proxy's HAProxy checks, on a cluster or this machine). */
  private readonly healthWatch: PollingWatch<string[]>;
  /** Reads the paths' health at once when an instance's endpoints change (kubernetes target). */
  private readonly instanceWatch: InstanceWatch | undefined;
  /** Re-runs groups whose settings the environment changed (kubernetes target). */
  private readonly settingsWatch: PollingWatch<BridgeSettings | undefined> | undefined;
  /** Puts back what someone else changed of a group's objects (kubernetes target). */
  private readonly drift: DriftHealing | undefined;
  private stopped = false;

  constructor(private readonly opts: BridgeOptions) {
    this.kc = loadKubeConfig(opts.kubeconfig);
    const writer = new KubePathWriter(this.kc, opts.settings);
    const events = new EventRecorder(this.kc, opts.log);
    const nodes = opts.target.kind === "kubernetes" ? dataPlaneNodes(opts.target.kubeconfig) : undefined;
    this.stacks = new StackRunner({
      target: opts.target,
      stateDir: opts.stateDir,
      pulumiEnv: opts.pulumiEnv,
      ...(opts.secretsProvider ? { secretsProvider: opts.secretsProvider } : {}),
      ...(opts.leaderElected ? { leaderElected: true } : {}),
      slotSize: opts.slotSize,
      ...(opts.maxPortsPerGroup !== undefined ? { maxPortsPerGroup: opts.maxPortsPerGroup } : {}),
      settings: () => writer.readSettings(),
      ...(nodes ? { nodes } : {}),
    });
    const target = opts.target;
    this.drift =
      target.kind === "kubernetes"
        ? new DriftHealing({
            kubeconfig: target.kubeconfig,
            namespace: target.namespace,
            ...(opts.driftInformers ? { informers: opts.driftInformers } : {}),
            groups: () => this.cache.groups(),
            enqueue: (key) => this.queue.add(key),
            stackObjects: (key) => this.stacks.stackObjects(key),
            log: opts.log,
          })
        : undefined;
    const reconciler = new GroupReconciler({
      paths: (key) => this.cache.group(key),
      firstSeen: (id) => this.cache.firstSeen(id),
      stacks: this.stacks,
      writer,
      ...(this.drift ? { drift: this.drift.ledger } : {}),
      ...(opts.target.kind === "kubernetes" ? { driftNamespace: opts.target.namespace } : {}),
      onRunEvent: (key, e) => this.drift?.runEvent(key, e),
      events,
      metrics: opts.metrics,
      log: opts.log,
      stopping: () => this.stopped,
    });
    this.queue = new WorkQueue({
      concurrency: opts.concurrency,
      handler: async (key) => {
        this.drift?.runStarted(key);
        try {
          return await reconciler.reconcile(key);
        } finally {
          this.drift?.runEnded(key);
        }
      },
      onDepth: (n) => opts.metrics.setQueueDepth(n),
      onError: (key, error, attempt, retryInMs) =>
        opts.log("error", retryInMs === undefined ? "reconcile failed; not retried" : "reconcile failed", {
          group: key,
          error: clientErrorMessage(error),
          ...(retryInMs === undefined ? {} : { attempt, retryInMs }),
        }),
    });
    this.cache = new PathCache(opts.informer ?? networkPathInformer(this.kc), {
      enqueue: (key) => this.queue.add(key),
      log: opts.log,
    });
    this.nodeWatch = nodes
      ? new NodeHostWatch({
          list: nodes,
          wanted: () => this.cache.groups().some((key) => this.stacks.picksNodeHostFor(key)),
          // nodeHostMoved is false for a group whose proxy reports no picked node.
          onHosts: (hosts) =>
            this.runAgain(
              this.cache.groups().filter((key) => this.stacks.nodeHostMoved(key, hosts)),
              "the node a NodePort proxy reports moved; running its groups again",
              { hosts },
            ),
          intervalMs: opts.nodePollMs ?? 30_000,
          log: opts.log,
        })
      : undefined;
    this.followerWatches = this.stacks.followers().map(({ follower }) => {
      const following = () => this.cache.groups().filter((key) => this.stacks.followedBy(key, follower));
      return new PollingWatch<string[]>({
        wanted: () => following().length > 0,
        read: async () => {
          const moved: string[] = [];
          for (const key of following())
            if (await follower.moved(key, this.cache.group(key))) moved.push(key);
          return moved;
        },
        onRead: (moved) => this.runAgain(moved, follower.messages.moved),
        intervalMs: opts.endpointsPollMs ?? 5_000,
        log: opts.log,
        messages: { failing: follower.messages.failing, recovered: follower.messages.recovered },
      });
    });
    const healthy = () => this.cache.groups().filter((key) => this.stacks.readsHealthOf(key));
    // Either target: a cluster's proxy pods, or this machine's HAProxy processes (the proxy's reader).
    this.healthWatch = new PollingWatch<string[]>({
      wanted: () => healthy().length > 0,
      read: async () => {
        const moved: string[] = [];
        for (const key of healthy())
          if (await this.stacks.healthMoved(key, this.cache.group(key))) moved.push(key);
        return moved;
      },
      onRead: async (moved) => {
        // A path that cannot be used says so now; the run confirms it and brings it back.
        const health = (key: string, live: NetworkPathObject[]) =>
          this.stacks.health ? this.stacks.health(key, live) : Promise.resolve({});
        for (const key of moved) {
          const unusable = await reportUnusable(key, {
            paths: (k) => this.cache.group(k),
            health,
            writer,
            events,
          }).catch((err: unknown) => {
            opts.log("warn", "could not report the paths' health", {
              group: key,
              error: clientErrorMessage(err),
            });
            return [];
          });
          if (unusable.length > 0)
            opts.log("info", "paths whose data path cannot be used now are Ready=False", {
              group: key,
              paths: unusable,
            });
        }
        this.runAgain(moved, "a path's health changed (its data path says so); running its group again");
      },
      // Every 2 s: with HAProxy calling a lost instance down about 1 s after its first failed check
      // (DEFAULT_CHECK's fastinter), a path stops saying Ready within about 3 s of that check.
      intervalMs: opts.healthPollMs ?? 2_000,
      log: opts.log,
      messages: {
        failing: "cannot read the paths' health; they keep the status they have",
        recovered: "reading the paths' health works again",
      },
    });
    this.instanceWatch =
      target.kind === "kubernetes"
        ? new InstanceWatch({
            informer: opts.sliceInformer ?? dataPlaneSliceInformer(target.kubeconfig),
            services: () =>
              new Set(
                healthy()
                  .flatMap((key) => this.cache.group(key))
                  .map(instanceServiceKey)
                  .filter((k) => k !== undefined),
              ),
            onChange: (service, verb) => {
              // The first list adds every slice: read, but say only what changed.
              if (verb !== "add")
                opts.log("info", "an instance's endpoints changed; reading the paths' health now", {
                  service,
                });
              this.healthWatch.kick();
            },
            log: opts.log,
          })
        : undefined;
    this.settingsWatch =
      opts.target.kind === "kubernetes" && opts.settings
        ? new PollingWatch<BridgeSettings | undefined>({
            wanted: () => this.cache.groups().length > 0,
            read: () => writer.readSettings(),
            onRead: (settings) =>
              this.runAgain(
                this.cache.groups().filter((key) => this.stacks.settingsMoved(key, settings)),
                "the environment changed these groups' settings; running them again",
              ),
            intervalMs: opts.settingsPollMs ?? 10_000,
            log: opts.log,
            messages: {
              failing: "cannot read the environment's settings; groups keep the ones they ran with",
              recovered: "reading the environment's settings works again",
            },
          })
        : undefined;
  }

  /**
   * Queues the groups a watch found moved (what their last run used is no longer so), with one
   * log line naming them and why; nothing when none moved.
   */
  private runAgain(groups: string[], why: string, detail: Record<string, unknown> = {}): void {
    if (groups.length === 0) return;
    this.opts.log("info", why, { groups, ...detail });
    for (const key of groups) this.queue.add(key);
  }

  healthy(): boolean {
    return this.cache.healthy();
  }

  async start(): Promise<void> {
    await this.stacks.reapOrphans((pids) =>
      this.opts.log("warn", "killing engine processes a previous bridge left behind", { pids }),
    );
    // The informer queues every path's group as it lists them (an add event each); a list that
    // fails (the control plane may be down or restarting) is retried with backoff by the cache.
    await this.cache.start();
    // Workers start once the cache holds the whole list (controller-runtime's WaitForCacheSync).
    this.queue.start();
    this.nodeWatch?.start();
    await this.drift?.start();
    this.healthWatch.start();
    await this.instanceWatch?.start();
    for (const w of this.followerWatches) w.start();
    this.settingsWatch?.start();
    // Groups that have a stack but no paths any more (deleted while the bridge was down); a
    // group with paths is queued by the list already (again would cost a second engine run).
    const listed = new Set(this.cache.groups());
    for (const key of this.stacks.slottedGroups()) if (!listed.has(key)) this.queue.add(key);
  }

  /**
   * Stops taking work, cancels the engine runs in flight and waits (up to `timeoutMs`) for
   * them to end. The Automation API's abort signal sends `pulumi` SIGINT, on which the engine
   * lets running resource operations finish, writes its checkpoint and releases the stack
   * lock, so the next leader finds a clean stack instead of one it must repair. Only after
   * this may the caller release the leader lease (programs/bridge/main.ts): a successor must not
   * start while this process's engines still write.
   */
  async stop(timeoutMs = 20_000): Promise<void> {
    this.stopped = true;
    this.nodeWatch?.stop();
    await this.drift?.stop();
    this.healthWatch.stop();
    await this.instanceWatch?.stop();
    for (const w of this.followerWatches) w.stop();
    this.settingsWatch?.stop();
    const running = this.queue.active();
    this.stacks.cancel();
    const ended = await this.queue.shutDown(timeoutMs);
    await this.cache.stop().catch(() => undefined);
    if (running.length === 0) return;
    this.opts.log(ended ? "info" : "warn", ended ? "engine runs cancelled" : "engine runs still running", {
      groups: running,
    });
    // A lock a cancelled CLI left behind (StackRunner.releaseCancelled).
    if (ended) {
      await this.stacks
        .releaseCancelled(running, this.opts.log)
        .catch((err: unknown) =>
          this.opts.log("warn", "could not release the locks of cancelled updates", { error: String(err) }),
        );
    }
  }
}
