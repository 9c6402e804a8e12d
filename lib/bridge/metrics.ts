/** Reconcile counters and durations, rendered in the Prometheus text format for /metrics. */
export class BridgeMetrics {
  private readonly reconciles = new Map<string, number>();
  private readonly durations: number[] = [];
  private engineRuns = 0;
  private queueDepth = 0;
  /** 1 while this process leads (always 1 without leader election). */
  private leader = 1;

  recordReconcile(result: "success" | "error", seconds: number): void {
    this.reconciles.set(result, (this.reconciles.get(result) ?? 0) + 1);
    this.durations.push(seconds);
  }

  recordEngineRun(): void {
    this.engineRuns += 1;
  }

  setQueueDepth(n: number): void {
    this.queueDepth = n;
  }

  setLeader(leading: boolean): void {
    this.leader = leading ? 1 : 0;
  }

  /** Histogram buckets in seconds: an engine run takes seconds, a no-op well under one. */
  static readonly BUCKETS = [0.5, 1, 2, 5, 10, 30, 60, 120];

  render(): string {
    const lines = [
      "# HELP klutch_bridge_reconciles_total Group reconciles by result.",
      "# TYPE klutch_bridge_reconciles_total counter",
      ...["success", "error"].map(
        (r) => `klutch_bridge_reconciles_total{result="${r}"} ${this.reconciles.get(r) ?? 0}`,
      ),
      "# HELP klutch_bridge_engine_runs_total Pulumi engine runs (up or destroy).",
      "# TYPE klutch_bridge_engine_runs_total counter",
      `klutch_bridge_engine_runs_total ${this.engineRuns}`,
      "# HELP klutch_bridge_queue_depth Groups waiting to be reconciled.",
      "# TYPE klutch_bridge_queue_depth gauge",
      `klutch_bridge_queue_depth ${this.queueDepth}`,
      "# HELP klutch_bridge_leader 1 while this bridge holds the leader lease (or runs without election).",
      "# TYPE klutch_bridge_leader gauge",
      `klutch_bridge_leader ${this.leader}`,
      "# HELP klutch_bridge_reconcile_duration_seconds Duration of group reconciles.",
      "# TYPE klutch_bridge_reconcile_duration_seconds histogram",
    ];
    for (const le of BridgeMetrics.BUCKETS) {
      lines.push(
        `klutch_bridge_reconcile_duration_seconds_bucket{le="${le}"} ${this.durations.filter((d) => d <= le).length}`,
      );
    }
    lines.push(`klutch_bridge_reconcile_duration_seconds_bucket{le="+Inf"} ${this.durations.length}`);
    lines.push(`klutch_bridge_reconcile_duration_seconds_sum ${this.durations.reduce((a, b) => a + b, 0)}`);
    lines.push(`klutch_bridge_reconcile_duration_seconds_count ${this.durations.length}`);
    return `${lines.join("\n")}\n`;
  }
}
