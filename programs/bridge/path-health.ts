import type { NetworkPathObject } from "../../lib/bridge/api";
import { groupImplementation } from "../../lib/bridge/grouping";
import type { BridgeTarget } from "../../network/contract/bridge-target";
import type { HealthReader, PathHealth } from "../../network/contract/implementation";
import { IMPLEMENTATIONS } from "../../network/registry";

/**
 * Each group's paths' health as their implementation's data path says it (its spec's
 * `pulumi.health`: the proxy's HAProxy checks), read after each run and polled for changes
 * (programs/bridge/controller.ts), so a path is Ready only while a client can use it. On either
 * target; the bridge knows no implementation's reader itself.
 */
export class PathHealthTracker {
  private readonly readers = new Map<string, HealthReader>();
  /** What each group's last run wrote from (a poll compares with it). */
  private readonly written = new Map<string, string>();

  constructor(
    private readonly opts?: { kubeconfig?: string; targetOf: (key: string) => BridgeTarget | undefined },
  ) {
    if (!opts) return;
    for (const spec of IMPLEMENTATIONS) {
      const make = spec.pulumi.health?.();
      if (make) this.readers.set(spec.name, make(opts.kubeconfig ? { kubeconfig: opts.kubeconfig } : {}));
    }
  }

  private reader(key: string): { reader: HealthReader; target: BridgeTarget } | undefined {
    const target = this.opts?.targetOf(key);
    const reader = this.readers.get(groupImplementation(key));
    return target && reader?.reads(key, target) ? { reader, target } : undefined;
  }

  /** Whether the group's paths' health is read. */
  reads(key: string): boolean {
    return this.reader(key) !== undefined;
  }

  /** The paths' health now, for the statuses a run writes. */
  async read(key: string, live: readonly NetworkPathObject[]): Promise<Record<string, PathHealth>> {
    const r = this.reader(key);
    if (!r) return {};
    const health = await r.reader.read(key, r.target, live);
    this.written.set(key, signature(health));
    return health;
  }

  /**
   * Whether the paths' health is other now than the group's last run wrote. Only after a run
   * that wrote it: a group that has not run here yet, or whose last run failed, runs when its
   * queue says (its backoff), not every poll.
   */
  async moved(key: string, live: readonly NetworkPathObject[]): Promise<boolean> {
    const r = this.reader(key);
    if (!r || !this.written.has(key)) return false;
    return signature(await r.reader.read(key, r.target, live)) !== (this.written.get(key) ?? signature({}));
  }

  forget(key: string): void {
    this.written.delete(key);
  }
}

/** Readiness and reason per path, in a stable order (messages are the reason's words). */
function signature(health: Record<string, PathHealth>): string {
  return JSON.stringify(
    Object.entries(health)
      .map(([id, h]) => [id, h.ready, h.reason])
      .sort(),
  );
}
