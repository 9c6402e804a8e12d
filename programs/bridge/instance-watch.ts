import * as k8s from "@kubernetes/client-node";
import { backoffDelay } from "../../lib/bridge/backoff";
import type { NetworkPathObject } from "../../lib/bridge/api";
import { clientErrorMessage, isForbidden } from "../../lib/kube/client-errors";
import type { Logger } from "./log";
import { realClock, type Clock } from "./workqueue";

/** What the watch reads of an EndpointSlice: whose Service it is. */
export interface WatchedSlice {
  metadata?: { namespace?: string; labels?: Record<string, string> };
}

/** The part of client-node's Informer the watch uses (fakes in the unit tests). */
export interface SliceInformer {
  on(verb: "add" | "update" | "delete", cb: (slice: WatchedSlice) => void): void;
  on(verb: "error", cb: (err?: unknown) => void): void;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The label the EndpointSlice controller puts on the slices it keeps for a Service with a
 * selector (Kubernetes docs, "EndpointSlices": Management): instances' Services. The kernel
 * hop's own slices (managed by the bridge) and other controllers' are not watched.
 */
export const CONTROLLER_SLICES = "endpointslice.kubernetes.io/managed-by=endpointslice-controller.k8s.io";

/**
 * One list/watch of every controller-kept EndpointSlice of the data-service cluster, as the
 * data-plane identity (`list` and `watch` EndpointSlices cluster-wide: lib/bridge/rbac.ts
 * dataPlaneInstanceRules). kube-proxy on every node holds the same watch, so the API server
 * serves it from its watch cache.
 */
export function dataPlaneSliceInformer(kubeconfig: string): SliceInformer {
  const kc = new k8s.KubeConfig();
  kc.loadFromString(kubeconfig);
  const discovery = kc.makeApiClient(k8s.DiscoveryV1Api);
  return k8s.makeInformer<k8s.V1EndpointSlice>(
    kc,
    "/apis/discovery.k8s.io/v1/endpointslices",
    () => discovery.listEndpointSliceForAllNamespaces({ labelSelector: CONTROLLER_SLICES }),
    CONTROLLER_SLICES,
  );
}

/** `<namespace>/<name>` of the Service a path's instance host names (any cluster domain), if it names one. */
export function instanceServiceKey(path: NetworkPathObject): string | undefined {
  const [name, namespace, svc] = path.spec.instanceHost.toLowerCase().split(".");
  return name && namespace && svc === "svc" ? `${namespace}/${name}` : undefined;
}

export interface InstanceWatchOptions {
  informer: SliceInformer;
  /** The instance Services (`<namespace>/<name>`) whose endpoints some group's health depends on now. */
  services: () => ReadonlySet<string>;
  /** A slice of one of them was added (the informer's first list adds each), changed or deleted. */
  onChange: (service: string, verb: "add" | "update" | "delete") => void;
  log: Logger;
  clock?: Clock;
}

/**
 * Reads the paths' health as soon as an instance's endpoints change, instead of at the next
 * health poll (up to 2 s later): the poll stays, for what no event says (HAProxy's checks, the
 * proxy's pods). A watch that fails restarts with backoff; one refused (403: an environment made
 * before the `watch` right) is left off and said once, and the poll alone reads the health.
 */
export class InstanceWatch {
  private failures = 0;
  private stopped = false;

  constructor(private readonly opts: InstanceWatchOptions) {
    const seen = (verb: "add" | "update" | "delete", slice: WatchedSlice) => {
      const name = slice.metadata?.labels?.["kubernetes.io/service-name"];
      const key = `${slice.metadata?.namespace ?? ""}/${name ?? ""}`;
      if (name && opts.services().has(key)) opts.onChange(key, verb);
    };
    for (const verb of ["add", "update", "delete"] as const) opts.informer.on(verb, (s) => seen(verb, s));
    opts.informer.on("error", (err) => this.failed(err));
  }

  async start(): Promise<void> {
    await this.opts.informer.start().then(
      () => (this.failures = 0),
      (e: unknown) => this.failed(e),
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.opts.informer.stop().catch(() => undefined);
  }

  private failed(err: unknown): void {
    if (this.stopped) return;
    const message = clientErrorMessage(err);
    if (isForbidden(err)) {
      this.opts.log(
        "info",
        "the data-plane identity may not watch EndpointSlices; the paths' health is polled only",
        {
          error: message,
        },
      );
      return;
    }
    this.failures += 1;
    const delay = backoffDelay(this.failures, 500, 30_000);
    this.opts.log("warn", "the instances' EndpointSlice watch failed; restarting", {
      error: message,
      retryInMs: delay,
    });
    (this.opts.clock ?? realClock).setTimeout(() => {
      if (!this.stopped) void this.start();
    }, delay);
  }
}
