import type { NetworkPathObject } from "../../lib/bridge/model";
import type { KubernetesTarget, TargetFollower, TargetFollowerOptions } from "../contract/implementation";
import { admitConnections } from "./model/admission";
import {
  backendKey,
  backendsDiffer,
  backendsOf,
  instanceTargetOf,
  type BackendsResult,
  type EndpointSliceLike,
  type InstanceServiceLike,
} from "./model/kernel-path";
import { toConnection } from "./model/target";

// The reads of an instance Service and its EndpointSlices are shared with WireGuard's health
// reader (network/shared/instance-reads.ts).
export { dataPlaneInstances, type InstanceReads } from "../shared/instance-reads";
import { dataPlaneInstances, type InstanceReads } from "../shared/instance-reads";

/** A resolution, and the keys whose reads failed (the API server did not answer, or refused). */
export interface Resolution {
  backends: Record<string, BackendsResult>;
  failed: Set<string>;
}

/**
 * The ready endpoints of every instance Service a group's paths name, by `host:port`. Paths
 * to an address, or with a host the kernel hop cannot follow, need no read (the program says
 * why for the latter). A read that fails is that instance's problem only.
 */
export async function resolveBackends(
  live: readonly NetworkPathObject[],
  reads: InstanceReads,
  clusterDomain?: string,
): Promise<Resolution> {
  const out: Record<string, BackendsResult> = {};
  const failed = new Set<string>();
  const services = new Map<string, Promise<[InstanceServiceLike | undefined, EndpointSliceLike[]]>>();
  for (const c of admitConnections(live.map(toConnection)).admitted) {
    const target = instanceTargetOf(c.instanceHost, clusterDomain);
    if (target.kind !== "service") continue;
    const key = backendKey(c.instanceHost, c.port);
    if (key in out) continue;
    const ref = `${target.namespace}/${target.name}`;
    if (!services.has(ref)) {
      services.set(
        ref,
        Promise.all([
          reads.service(target.namespace, target.name),
          reads.slices(target.namespace, target.name),
        ]),
      );
    }
    try {
      const [service, slices] = await services.get(ref)!;
      out[key] = backendsOf(target, c.port, service, slices);
    } catch (e) {
      failed.add(key);
      out[key] = {
        problem: `cannot read Service ${ref} or its EndpointSlices in the data-service cluster: ${(e as Error).message}`,
      };
    }
  }
  return { backends: out, failed };
}

/**
 * The endpoints as read now, except where the read failed: there what the group last ran with
 * stays. An API server that does not answer for a moment must neither take a working path's
 * endpoints away nor count as a move.
 */
export function keepLastOnFailure(
  now: Resolution,
  last: Record<string, BackendsResult>,
): Record<string, BackendsResult> {
  const kept = { ...now.backends };
  for (const k of now.failed) if (last[k]) kept[k] = last[k];
  return kept;
}

/** What the tracker reads of a group's kubernetes target. */
export interface BackendsTarget {
  hop?: "haproxy" | "kernel";
  backends?: Record<string, BackendsResult>;
}

/**
 * The instance endpoints each kernel-hop group was last run with, so the poll
 * (programs/bridge/node-watch.ts PollingWatch, wired in programs/bridge/controller.ts for every
 * implementation's follower, network/contract/implementation.ts TargetFollower) runs again exactly the
 * groups whose instances moved: a pod restarted with a new address, a replica added or gone.
 * Level-based, as NodeHostTracker: compared with what each group last ran with.
 */
export class InstanceBackendsTracker {
  private readonly realised = new Map<string, Record<string, BackendsResult>>();

  constructor(
    private readonly opts: {
      /** The group's kubernetes target as of the settings last read; undefined on the local target. */
      targetOf: (key: string) => BackendsTarget | undefined;
      reads?: InstanceReads;
    },
  ) {}

  /** Whether the group's paths are kernel paths (whose endpoints the bridge follows). */
  follows(key: string): boolean {
    return this.opts.reads !== undefined && this.opts.targetOf(key)?.hop === "kernel";
  }

  /** The target a group runs with: a kernel path's with its instances' endpoints read now. */
  async realise<T extends BackendsTarget>(
    key: string,
    target: T,
    live: readonly NetworkPathObject[],
  ): Promise<T> {
    if (target.hop !== "kernel" || !this.opts.reads) return target;
    const now = await resolveBackends(live, this.opts.reads);
    const backends = keepLastOnFailure(now, this.realised.get(key) ?? {});
    this.realised.set(key, backends);
    return { ...target, backends };
  }

  /** Whether the group's instances have other endpoints now than it was last run with. */
  async moved(key: string, live: readonly NetworkPathObject[]): Promise<boolean> {
    const last = this.realised.get(key);
    if (!last || !this.follows(key) || !this.opts.reads) return false;
    const now = await resolveBackends(live, this.opts.reads);
    return backendsDiffer(keepLastOnFailure(now, last), last);
  }

  /** Forgets a group whose stack is gone. */
  forget(key: string): void {
    this.realised.delete(key);
  }
}

/** The proxy's follower (its spec's `pulumi.follower`): a kernel path's instance endpoints, read as the data-plane identity. */
export function instanceFollower(opts: TargetFollowerOptions): TargetFollower {
  const tracker = new InstanceBackendsTracker({
    targetOf: opts.targetOf,
    reads: dataPlaneInstances(opts.kubeconfig),
  });
  return {
    follows: (key) => tracker.follows(key),
    realise: <T extends KubernetesTarget>(key: string, target: T, live: readonly NetworkPathObject[]) =>
      tracker.realise(key, target, live),
    moved: (key, live) => tracker.moved(key, live),
    forget: (key) => tracker.forget(key),
    messages: {
      moved: "a kernel path's instance endpoints moved; running its groups again",
      failing: "cannot read the instances' endpoints; kernel paths keep the ones they have",
      recovered: "reading the instances' endpoints works again",
    },
  };
}
