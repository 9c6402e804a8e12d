import * as k8s from "@kubernetes/client-node";
import { backoffDelay } from "../../lib/bridge/backoff";
import { clientErrorMessage, isForbidden } from "../../lib/kube/client-errors";
import {
  DRIFT_KINDS,
  DRIFT_SELECTOR,
  driftOf,
  groupOfObject,
  type Drift,
  type DriftKind,
  type WatchedObject,
} from "../../lib/bridge/drift";
import type { Logger } from "./log";
import { realClock, type Clock } from "./workqueue";
import { groupFieldManager } from "../../lib/bridge/grouping";
import { patchDriftOf } from "../../lib/bridge/patch-drift";

/** The part of client-node's Informer the watch uses (fakes in the unit tests). */
export interface DriftInformer {
  on(verb: "add" | "update" | "delete", cb: (obj: WatchedObject) => void): void;
  on(verb: "error", cb: (err?: unknown) => void): void;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A list/watch per kind of the objects groups' stacks made in the data plane's namespace, by
 * their label (lib/bridge/drift.ts DRIFT_SELECTOR), as the data-plane identity: the rights
 * lib/bridge/rbac.ts dataPlaneRules already gives (list and watch there; EndpointSlices only
 * where some app cluster uses the kernel hop, elsewhere that one watch is refused and left off).
 */
export function dataPlaneDriftInformers(
  kubeconfig: string,
  namespace: string,
): Record<DriftKind, DriftInformer> {
  const kc = new k8s.KubeConfig();
  kc.loadFromString(kubeconfig);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const apps = kc.makeApiClient(k8s.AppsV1Api);
  const net = kc.makeApiClient(k8s.NetworkingV1Api);
  const discovery = kc.makeApiClient(k8s.DiscoveryV1Api);
  const q = { namespace, labelSelector: DRIFT_SELECTOR };
  const informer = <T extends k8s.KubernetesObject>(
    path: string,
    list: () => Promise<k8s.KubernetesListObject<T>>,
  ) => k8s.makeInformer<T>(kc, path, list, DRIFT_SELECTOR) as unknown as DriftInformer;
  return {
    ConfigMap: informer(`/api/v1/namespaces/${namespace}/configmaps`, () => core.listNamespacedConfigMap(q)),
    Service: informer(`/api/v1/namespaces/${namespace}/services`, () => core.listNamespacedService(q)),
    Deployment: informer(`/apis/apps/v1/namespaces/${namespace}/deployments`, () =>
      apps.listNamespacedDeployment(q),
    ),
    NetworkPolicy: informer(`/apis/networking.k8s.io/v1/namespaces/${namespace}/networkpolicies`, () =>
      net.listNamespacedNetworkPolicy(q),
    ),
    EndpointSlice: informer(`/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices`, () =>
      discovery.listNamespacedEndpointSlice(q),
    ),
  };
}

export interface DriftWatchOptions {
  informers: Record<DriftKind, DriftInformer>;
  /** The groups the bridge has now. */
  groups: () => string[];
  /** Whether the group's own run may have made the change (in flight, or just ended). */
  busy: (key: string) => boolean;
  onDrift: (key: string, drift: Drift) => void;
  /**
   * A deletion while the group's own run may be making it (programs/bridge/controller.ts checks
   * it against the group's stack once the run is over: an object the stack still holds was not
   * the run's to delete).
   */
  onBusyDeletion?: (key: string, drift: Drift) => void;
  log: Logger;
  clock?: Clock;
}

/**
 * Watches (not a timer's refresh of every stack): each kind's informer keeps its objects, so an
 * update is compared with the object before it, and a change none of the group's runs made is
 * drift. A watch that fails restarts with backoff, as the path cache's does; one refused
 * (403: the identity may not watch that kind) is left off and said once.
 */
export class DriftWatch {
  private readonly last = new Map<string, WatchedObject>();
  private readonly failures = new Map<DriftKind, number>();
  private stopped = false;

  constructor(private readonly opts: DriftWatchOptions) {
    for (const kind of DRIFT_KINDS) {
      const inf = opts.informers[kind];
      const id = (o: WatchedObject) => `${kind}/${o.metadata?.name ?? ""}`;
      inf.on("add", (o) => this.last.set(id(o), o));
      inf.on("update", (o) => {
        this.seen(kind, "update", this.last.get(id(o)), o);
        this.last.set(id(o), o);
      });
      inf.on("delete", (o) => {
        const before = this.last.get(id(o));
        this.last.delete(id(o));
        this.seen(kind, "delete", before, o);
      });
      inf.on("error", (err) => this.failed(kind, err));
    }
  }

  async start(): Promise<void> {
    await Promise.all(DRIFT_KINDS.map((kind) => this.startKind(kind)));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(DRIFT_KINDS.map((kind) => this.opts.informers[kind].stop().catch(() => undefined)));
  }

  private async startKind(kind: DriftKind): Promise<void> {
    await this.opts.informers[kind].start().catch((e: unknown) => this.failed(kind, e));
  }

  private seen(
    kind: DriftKind,
    event: "update" | "delete",
    before: WatchedObject | undefined,
    o: WatchedObject,
  ) {
    const groups = this.opts.groups();
    const key = groupOfObject(o, groups);
    if (key !== undefined) {
      this.report(key, driftOf(kind, event, before, o));
      return;
    }
    // An object no group made, in which groups apply keys of their own (the WireGuard gateway's
    // flows): each group's part is told by its field manager.
    if (kind !== "ConfigMap") return;
    for (const g of groups) this.report(g, patchDriftOf(kind, event, before, o, groupFieldManager(g)));
  }

  private report(key: string, drift: Drift | undefined): void {
    if (!drift) return;
    if (!this.opts.busy(key)) this.opts.onDrift(key, drift);
    else if (drift.change === "deleted") this.opts.onBusyDeletion?.(key, drift);
  }

  private failed(kind: DriftKind, err: unknown): void {
    if (this.stopped) return;
    const message = clientErrorMessage(err);
    if (isForbidden(err)) {
      this.opts.log("info", "the data-plane identity may not watch this kind; its drift is not watched", {
        kind,
      });
      return;
    }
    const n = (this.failures.get(kind) ?? 0) + 1;
    this.failures.set(kind, n);
    const delay = backoffDelay(n, 500, 30_000);
    this.opts.log("warn", "drift watch failed; restarting", { kind, error: message, retryInMs: delay });
    (this.opts.clock ?? realClock).setTimeout(() => {
      if (!this.stopped) void this.startKind(kind).then(() => this.failures.set(kind, 0));
    }, delay);
  }
}
