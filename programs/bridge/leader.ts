import * as k8s from "@kubernetes/client-node";
import {
  DEFAULT_TIMING,
  leaseDecision,
  nextLeaseSpec,
  observeLease,
  timingProblem,
  type LeaseObservation,
  type LeaseSpec,
  type LeaseTiming,
} from "../../lib/bridge/lease";
import { clientErrorMessage } from "../../lib/kube/client-errors";
import { loadKubeConfig } from "./kubeconfig";
import type { Logger } from "./log";

export interface LeaderElectorOptions {
  /** A kubeconfig file; in-cluster config when undefined (programs/bridge/kubeconfig.ts). */
  kubeconfig: string | undefined;
  /** The Lease API; made from kubeconfig when not given (tests give their own). */
  api?: LeaseApi;
  namespace: string;
  name: string;
  identity: string;
  log: Logger;
  timing?: LeaseTiming;
}

/** The calls of the Lease API this elector makes. */
export type LeaseApi = Pick<
  k8s.CoordinationV1Api,
  "readNamespacedLease" | "createNamespacedLease" | "replaceNamespacedLease"
>;

/**
 * Holds a Lease for as long as this process leads. `run` resolves once this process is
 * the leader; `onLost` is called (once) when it could not renew within the renew deadline,
 * and the caller must stop doing leader work at once (the bridge exits).
 */
export class LeaderElector {
  private readonly api: LeaseApi;
  private readonly timing: LeaseTiming;
  private lastRenew = 0;
  /** The lease record as last read, and when this process first saw it so (its own clock). */
  private observed?: LeaseObservation;
  private timer?: NodeJS.Timeout;
  private watchdog?: NodeJS.Timeout;
  private stopped = false;
  /** The renewal in flight, if any: a release waits for it (see release). */
  private renewing?: Promise<void>;

  constructor(private readonly opts: LeaderElectorOptions) {
    this.api = opts.api ?? loadKubeConfig(opts.kubeconfig).makeApiClient(k8s.CoordinationV1Api);
    this.timing = opts.timing ?? DEFAULT_TIMING;
    const problem = timingProblem(this.timing);
    if (problem) throw new Error(`leader election: ${problem}`);
  }

  /** Waits until this process holds the lease, then keeps renewing it. */
  async run(onLost: () => void): Promise<void> {
    let waitingLogged = false;
    while (!this.stopped) {
      const outcome = await this.tryAcquireOrRenew().catch((e: unknown) => {
        this.opts.log("warn", "leader election: lease request failed", { error: clientErrorMessage(e) });
        return "failed" as const;
      });
      if (outcome === "held") break;
      if (outcome === "wait" && !waitingLogged) {
        this.opts.log("info", "leader election: another bridge leads; standing by", {
          lease: `${this.opts.namespace}/${this.opts.name}`,
        });
        waitingLogged = true;
      }
      await sleep(this.timing.retryPeriodSeconds * 1000);
    }
    if (this.stopped) return;
    this.opts.log("info", "leader election: leading", {
      lease: `${this.opts.namespace}/${this.opts.name}`,
      identity: this.opts.identity,
    });
    const lose = (reason: string) => {
      if (this.stopped) return;
      this.opts.log("error", "leader election: lost the lease; stopping", { reason });
      this.stop();
      onLost();
    };
    const overdue = () => Date.now() - this.lastRenew > this.timing.renewDeadlineSeconds * 1000;
    const renew = async () => {
      if (this.stopped) return;
      const outcome = await this.tryAcquireOrRenew().catch((e: unknown) => {
        this.opts.log("warn", "leader election: renewal failed", { error: clientErrorMessage(e) });
        return "failed" as const;
      });
      if (this.stopped) return;
      if (outcome !== "held" && overdue()) return lose(outcome);
      this.timer = setTimeout(schedule, this.timing.retryPeriodSeconds * 1000);
    };
    const schedule = () => {
      this.renewing = renew().finally(() => (this.renewing = undefined));
    };
    this.timer = setTimeout(schedule, this.timing.retryPeriodSeconds * 1000);
    // A renewal request that hangs (API server gone half-way) must not keep this process
    // leading past its deadline: the deadline is watched apart from the requests.
    this.watchdog = setInterval(() => {
      if (overdue()) lose("renew deadline passed");
    }, 500);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.watchdog) clearInterval(this.watchdog);
  }

  /**
   * Stops renewing and, if this process holds the lease, empties its holder so a standby
   * takes over at its next retry instead of waiting out the lease (a rolling update).
   */
  async release(): Promise<void> {
    this.stop();
    // A renewal already in flight would write the lease after the read below, and the release's
    // compare-and-swap would then fail with a 409, leaving the lease held until it expires.
    await this.renewing;
    if (this.lastRenew === 0) return;
    const { namespace, name, identity } = this.opts;
    for (let attempt = 1; ; attempt++) {
      const current = await this.api.readNamespacedLease({ name, namespace });
      if (current.spec?.holderIdentity !== identity) return;
      const spec = { ...plainSpec(current.spec), holderIdentity: "" };
      try {
        await this.api.replaceNamespacedLease({
          name,
          namespace,
          body: { ...current, spec: spec as unknown as k8s.V1LeaseSpec },
        });
        return;
      } catch (e) {
        // Written in between: read again and, if it is still ours, release it then.
        if ((e as { code?: number }).code !== 409 || attempt >= 3) throw e;
      }
    }
  }

  /** One round: "held" when this process holds the lease afterwards. */
  private async tryAcquireOrRenew(): Promise<"held" | "wait"> {
    const { namespace, name, identity } = this.opts;
    let current: k8s.V1Lease | undefined;
    try {
      current = await this.api.readNamespacedLease({ name, namespace });
    } catch (e) {
      if ((e as { code?: number }).code !== 404) throw e;
    }
    const now = new Date();
    const seen = plainSpec(current?.spec);
    this.observed = observeLease(this.observed, seen, now.getTime());
    const decision = leaseDecision(seen, identity, now, this.observed);
    if (decision === "wait") return "wait";
    const spec = nextLeaseSpec(seen, identity, now, decision, this.timing);
    const body: k8s.V1Lease = {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: {
        name,
        namespace,
        ...(current?.metadata?.resourceVersion ? { resourceVersion: current.metadata.resourceVersion } : {}),
      },
      // MicroTime strings pass through the client's serializer unchanged.
      spec: spec as unknown as k8s.V1LeaseSpec,
    };
    try {
      if (decision === "create") await this.api.createNamespacedLease({ namespace, body });
      // resourceVersion makes this a compare-and-swap: a rival's write in between is a 409.
      else await this.api.replaceNamespacedLease({ name, namespace, body });
    } catch (e) {
      const code = (e as { code?: number }).code;
      if (code === 409) return "wait";
      throw e;
    }
    this.lastRenew = now.getTime();
    // What we wrote is what we will read back next time: no change, no new observation.
    this.observed = observeLease(undefined, spec, now.getTime());
    return "held";
  }
}

/** The lease as the pure rules take it: times as RFC 3339 strings, whatever the client gave. */
function plainSpec(spec: k8s.V1LeaseSpec | undefined): LeaseSpec | undefined {
  if (!spec) return undefined;
  const time = (v: unknown) => (v instanceof Date ? v.toISOString() : typeof v === "string" ? v : undefined);
  return {
    holderIdentity: spec.holderIdentity,
    leaseDurationSeconds: spec.leaseDurationSeconds,
    acquireTime: time(spec.acquireTime),
    renewTime: time(spec.renewTime),
    leaseTransitions: spec.leaseTransitions,
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
