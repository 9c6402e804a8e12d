import * as k8s from "@kubernetes/client-node";
import { NETWORK_PATH_GROUP, NETWORK_PATH_PLURAL, NETWORK_PATH_VERSION } from "../../lib/bridge/api";
import { backoffDelay } from "../../lib/bridge/backoff";
import { groupKey, needsReconcile, pathId } from "../../lib/bridge/grouping";
import { clientErrorMessage } from "../../lib/kube/client-errors";
import { isManaged } from "../../network/registry";
import type { NetworkPathObject } from "../../lib/bridge/api";
import type { Logger } from "./log";
import { realClock, type Clock } from "./workqueue";

/** The part of client-node's Informer the cache uses (a fake one in the unit tests). */
export interface PathInformer {
  on(verb: "add" | "update" | "delete", cb: (obj: NetworkPathObject) => void): void;
  on(verb: "error" | "connect", cb: (err?: unknown) => void): void;
  start(): Promise<void>;
  stop(): Promise<void>;
  list(): NetworkPathObject[];
}

/** client-node's informer (list, then watch from the list's resourceVersion; relists on 410 Gone) of all NetworkPaths. */
export function networkPathInformer(kc: k8s.KubeConfig): PathInformer {
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  const informer = k8s.makeInformer(
    kc,
    `/apis/${NETWORK_PATH_GROUP}/${NETWORK_PATH_VERSION}/${NETWORK_PATH_PLURAL}`,
    () =>
      api.listClusterCustomObject({
        group: NETWORK_PATH_GROUP,
        version: NETWORK_PATH_VERSION,
        plural: NETWORK_PATH_PLURAL,
      }) as Promise<k8s.KubernetesListObject<k8s.KubernetesObject>>,
  );
  return informer as unknown as PathInformer;
}

/**
 * The bridge's list/watch cache of NetworkPaths (controller-runtime's informer cache): the
 * informer keeps the objects; this decides which events queue a group (lib/bridge/grouping.ts
 * needsReconcile: not the bridge's own status and finalizer writes), notes when each path was
 * first seen (for the reconcile trace), and restarts the informer with backoff when its
 * list or watch fails (client-node's informer stops on an error and leaves restarting to
 * its user). Events arrive as the watch delivers them: a new path is queued at once.
 */
export class PathCache {
  private readonly last = new Map<string, NetworkPathObject>();
  private readonly seenAt = new Map<string, number>();
  /** Failures in a row (for the restart backoff), and in all (to tell whether a start worked). */
  private failures = 0;
  private errors = 0;
  private stopped = false;
  private synced = false;
  private retry?: unknown;

  constructor(
    private readonly informer: PathInformer,
    private readonly opts: {
      /** Queues a group. */
      enqueue: (key: string) => void;
      log: Logger;
      clock?: Clock;
    },
  ) {
    informer.on("add", (obj) => this.changed(obj));
    informer.on("update", (obj) => this.changed(obj));
    informer.on("delete", (obj) => this.deleted(obj));
    informer.on("error", (err) => this.failed(err));
  }

  /** Lists, starts watching, and resolves once the first list is in (or failed; it is retried). */
  async start(): Promise<void> {
    await this.started();
    if (this.synced) this.opts.log("info", "listed network paths", { count: this.paths().length });
  }

  /** Starts the informer; the cache is synced when no error was reported meanwhile. */
  private async started(): Promise<void> {
    const errors = this.errors;
    await this.informer.start();
    if (!this.stopped && this.errors === errors) {
      this.synced = true;
      this.failures = 0;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry !== undefined) (this.opts.clock ?? realClock).clearTimeout(this.retry);
    await this.informer.stop();
  }

  /** Whether the cache is listed and watching (false from a list or watch failure until its restart worked). */
  healthy(): boolean {
    return this.synced;
  }

  /** The managed paths (NOOP markers left out). */
  paths(): NetworkPathObject[] {
    return this.informer.list().filter(isManaged);
  }

  /** The paths of one group. */
  group(key: string): NetworkPathObject[] {
    return this.paths().filter((p) => groupKey(p) === key);
  }

  /** The keys of every group that has paths. */
  groups(): string[] {
    return [...new Set(this.paths().map(groupKey))];
  }

  /** When the bridge first saw a path (ms since the epoch). */
  firstSeen(id: string): number | undefined {
    return this.seenAt.get(id);
  }

  private changed(obj: NetworkPathObject): void {
    if (!isManaged(obj)) return;
    const id = pathId(obj);
    const previous = this.last.get(id);
    this.last.set(id, obj);
    if (!this.seenAt.has(id)) this.seenAt.set(id, (this.opts.clock ?? realClock).now());
    if (previous && groupKey(previous) !== groupKey(obj)) this.opts.enqueue(groupKey(previous));
    if (needsReconcile(previous, obj)) this.opts.enqueue(groupKey(obj));
  }

  private deleted(obj: NetworkPathObject): void {
    if (!isManaged(obj)) return;
    this.last.delete(pathId(obj));
    this.seenAt.delete(pathId(obj));
    this.opts.enqueue(groupKey(obj));
  }

  private failed(err: unknown): void {
    this.synced = false;
    if (this.stopped) return;
    this.failures++;
    this.errors++;
    const delay = backoffDelay(this.failures, 500, 10_000);
    this.opts.log("warn", "list or watch of network paths failed; restarting", {
      error: clientErrorMessage(err),
      retryInMs: delay,
    });
    const clock = this.opts.clock ?? realClock;
    this.retry = clock.setTimeout(() => {
      this.retry = undefined;
      if (this.stopped) return;
      this.started().catch((e: unknown) => this.failed(e));
    }, delay);
  }
}
