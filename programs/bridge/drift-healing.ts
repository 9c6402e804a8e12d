import {
  DriftLedger,
  describeDrift,
  objectDeletedByStep,
  type Drift,
  type DriftKind,
  type StepStartLike,
} from "../../lib/bridge/drift";
import { DriftWatch, dataPlaneDriftInformers, type DriftInformer } from "./drift-watch";
import type { Logger } from "./log";

/**
 * How long after a group's run a change to its objects is still taken for the run's own (the
 * watch delivers the run's last writes a moment after the engine returns).
 */
const DRIFT_GRACE_MS = 2_000;
/** How long drift of a group settles before its run is queued. */
const DRIFT_SETTLE_MS = 500;

export interface DriftHealingOptions {
  kubeconfig: string;
  namespace: string;
  informers?: Record<DriftKind, DriftInformer>;
  /** The groups the bridge has now. */
  groups: () => string[];
  /** Queues the group's run (the work queue). */
  enqueue: (key: string) => void;
  /** The Kubernetes objects the group's stack holds, `Kind/name` (programs/bridge/stack-runner.ts). */
  stackObjects: (key: string) => Promise<Set<string>>;
  log: Logger;
  /** DRIFT_GRACE_MS and DRIFT_SETTLE_MS, shorter in the unit tests. */
  graceMs?: number;
  settleMs?: number;
}

/**
 * The bridge's drift healing, on the kubernetes target: the watch (programs/bridge/drift-watch.ts)
 * says what someone changed, the ledger (lib/bridge/drift.ts) holds it for the group's next run,
 * which refreshes and says on each path what it put back (programs/bridge/reconciler.ts). A
 * deletion seen while the group's own run may have made it is checked once the run is over: it
 * was the run's own when the run's engine steps deleted the object (a removal or a replacement)
 * or its stack no longer holds it; otherwise it is drift, noted for the next run even when the
 * run already put the object back (its refresh read it gone), so that run names it.
 */
export class DriftHealing {
  readonly ledger = new DriftLedger();
  private readonly watch: DriftWatch;
  /** Each group's run: Infinity while it runs, else when it ended. */
  private readonly runs = new Map<string, number>();
  private readonly deletedDuringRun = new Map<string, Drift[]>();
  /** The objects (`Kind/name`) each group's runs deleted themselves, until a recheck reads them. */
  private readonly ownDeletions = new Map<string, Set<string>>();
  private readonly rechecks = new Set<string>();
  private readonly settling = new Set<string>();
  private stopped = false;

  constructor(private readonly opts: DriftHealingOptions) {
    this.watch = new DriftWatch({
      informers: opts.informers ?? dataPlaneDriftInformers(opts.kubeconfig, opts.namespace),
      groups: opts.groups,
      busy: (key) => Date.now() - (this.runs.get(key) ?? -Infinity) < (opts.graceMs ?? DRIFT_GRACE_MS),
      onBusyDeletion: (key, drift) => {
        this.deletedDuringRun.set(key, [...(this.deletedDuringRun.get(key) ?? []), drift]);
        // In the grace after a run, its end has passed already: check from here.
        if (this.runs.get(key) !== Infinity) this.recheckLater(key);
      },
      onDrift: (key, drift) => this.noted(key, drift),
      log: opts.log,
    });
  }

  start(): Promise<void> {
    return this.watch.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.watch.stop();
  }

  /** The group's run starts (the work queue's handler). */
  runStarted(key: string): void {
    this.runs.set(key, Infinity);
    // What an earlier run deleted is kept while a deletion seen around it awaits its recheck.
    if (!this.deletedDuringRun.has(key)) this.ownDeletions.delete(key);
  }

  /** An engine event of the group's run: a step that deletes an object makes its deletion the run's. */
  runEvent(key: string, event: StepStartLike): void {
    const object = objectDeletedByStep(event);
    if (object === undefined) return;
    this.ownDeletions.set(key, (this.ownDeletions.get(key) ?? new Set()).add(object));
  }

  /** The group's run ended. */
  runEnded(key: string): void {
    this.runs.set(key, Date.now());
    if (this.deletedDuringRun.has(key)) this.recheckLater(key);
  }

  /** Notes drift for the group's next run, which is queued once what changed together settled. */
  private noted(key: string, drift: Drift): void {
    this.ledger.note(key, drift);
    this.opts.log("warn", `${describeDrift(drift, this.opts.namespace)}; running its group again`, {
      group: key,
    });
    // A hand rarely changes one object: what it changes together (a `kubectl delete` of
    // several) settles first, so one run puts all of it back and names each.
    if (this.settling.has(key)) return;
    this.settling.add(key);
    setTimeout(() => {
      this.settling.delete(key);
      if (!this.stopped) this.opts.enqueue(key);
    }, this.opts.settleMs ?? DRIFT_SETTLE_MS);
  }

  private recheckLater(key: string): void {
    if (this.rechecks.has(key)) return;
    this.rechecks.add(key);
    setTimeout(() => {
      this.rechecks.delete(key);
      void this.recheck(key);
    }, this.opts.graceMs ?? DRIFT_GRACE_MS);
  }

  private async recheck(key: string): Promise<void> {
    // Running again: its end checks them.
    if (this.stopped || this.runs.get(key) === Infinity) return;
    const deleted = this.deletedDuringRun.get(key) ?? [];
    const own = this.ownDeletions.get(key) ?? new Set<string>();
    this.deletedDuringRun.delete(key);
    this.ownDeletions.delete(key);
    const held = await this.opts.stackObjects(key).catch(() => new Set<string>());
    for (const d of deleted) {
      const object = `${d.kind}/${d.name}`;
      if (held.has(object) && !own.has(object)) this.noted(key, d);
    }
  }
}
