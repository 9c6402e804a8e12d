import * as prom from "prom-client";

/**
 * The bridge's Prometheus metrics, on prom-client: histograms keep fixed buckets (constant
 * memory, however long the bridge runs; the hand-made version kept every duration and scanned
 * the list on each scrape), and the default process metrics (CPU, resident memory, heap, event
 * loop lag, open fds) come for free. A registry per instance, so tests and several bridges in
 * one process never share counters.
 */
export class BridgeMetrics {
  readonly registry = new prom.Registry();
  /** Histogram buckets in seconds: an engine run takes seconds, a no-op well under one. */
  static readonly BUCKETS = [0.5, 1, 2, 5, 10, 30, 60, 120];

  private readonly reconciles = new prom.Counter({
    name: "klutch_bridge_reconciles_total",
    help: "Group reconciles by result.",
    labelNames: ["result"] as const,
    registers: [this.registry],
  });
  private readonly engineRuns = new prom.Counter({
    name: "klutch_bridge_engine_runs_total",
    help: "Pulumi engine runs (up or destroy).",
    registers: [this.registry],
  });
  private readonly queueDepth = new prom.Gauge({
    name: "klutch_bridge_queue_depth",
    help: "Groups waiting to be reconciled.",
    registers: [this.registry],
  });
  private readonly leader = new prom.Gauge({
    name: "klutch_bridge_leader",
    help: "1 while this bridge holds the leader lease (or runs without election).",
    registers: [this.registry],
  });
  private readonly durations = new prom.Histogram({
    name: "klutch_bridge_reconcile_duration_seconds",
    help: "Duration of group reconciles.",
    buckets: BridgeMetrics.BUCKETS,
    registers: [this.registry],
  });
  private readonly recoveries = new prom.Counter({
    name: "klutch_bridge_checkpoint_recoveries_total",
    help: "Unreadable stack checkpoints repaired, by action (restore an older copy, recreate the stack, or remove an unreadable metadata sidecar).",
    labelNames: ["action"] as const,
    registers: [this.registry],
  });
  private readonly driftCorrected = new prom.Counter({
    name: "klutch_bridge_drift_corrected_total",
    help: "Objects of a group's stack changed or deleted outside the bridge and put back by a refreshing run, by kind.",
    labelNames: ["kind"] as const,
    registers: [this.registry],
  });
  private readonly leftOut = new prom.Gauge({
    name: "klutch_bridge_paths_not_realised",
    help: "Paths their group left out at its last reconcile (no port left, invalid connection), by reason.",
    labelNames: ["reason"] as const,
    registers: [this.registry],
  });
  private readonly leftOutByGroup = new Map<string, Record<string, number>>();

  constructor(opts: { processMetrics?: boolean } = {}) {
    // Zero series exist from the start, so dashboards and tests see them before any reconcile.
    for (const r of ["success", "error"]) this.reconciles.labels(r).inc(0);
    this.leader.set(1);
    if (opts.processMetrics ?? true) prom.collectDefaultMetrics({ register: this.registry });
  }

  recordReconcile(result: "success" | "error", seconds: number): void {
    this.reconciles.labels(result).inc();
    this.durations.observe(seconds);
  }

  recordEngineRun(): void {
    this.engineRuns.inc();
  }

  recordCheckpointRecovery(action: "restore" | "recreate" | "sidecar"): void {
    this.recoveries.labels(action).inc();
  }

  recordDriftCorrected(kind: string): void {
    this.driftCorrected.labels(kind).inc();
  }

  /** The paths a group left out now, by reason (replaces what the group reported before). */
  setPathsNotRealised(group: string, byReason: Record<string, number>): void {
    if (Object.keys(byReason).length === 0) this.leftOutByGroup.delete(group);
    else this.leftOutByGroup.set(group, byReason);
    const totals: Record<string, number> = {};
    for (const counts of this.leftOutByGroup.values())
      for (const [reason, n] of Object.entries(counts)) totals[reason] = (totals[reason] ?? 0) + n;
    this.leftOut.reset();
    for (const [reason, n] of Object.entries(totals)) this.leftOut.labels(reason).set(n);
  }

  setQueueDepth(n: number): void {
    this.queueDepth.set(n);
  }

  setLeader(leading: boolean): void {
    this.leader.set(leading ? 1 : 0);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The Prometheus text exposition of every metric. */
  render(): Promise<string> {
    return this.registry.metrics();
  }
}
