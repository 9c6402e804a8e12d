/**
 * The instance-names watcher's reconciler: keeps every ServiceBinding claim of the app cluster
 * (claim-feed.ts, one feed per resource), turns them into the hosts file CoreDNS serves
 * (lib/instance-names/records.ts), resolves the addresses that are host names (an AWS load
 * balancer's; resolutions.ts), and writes the file when its text changes. The process (main.ts)
 * plugs in the Kubernetes client, DNS and the file; the tests plug in fakes and a clock.
 */
import { backoffDelay } from "../../lib/bridge/backoff";
import { hostsFile, isIPv4, recordsOf } from "../../lib/instance-names/records";
import { clientErrorMessage } from "../../lib/kube/client-errors";
import type { Logger } from "../bridge/log";
import { realClock, type Clock } from "../bridge/workqueue";
import { ClaimFeed, type ClaimSource } from "./claim-feed";
import { Resolutions } from "./resolutions";
import { Timers } from "./timers";

export { ABSENT_RETRY_MS, type ClaimSource, type WatchedClaim } from "./claim-feed";

export interface WatcherOptions {
  sources: ClaimSource[];
  zones: readonly string[];
  /** The IPv4 addresses of a host name. */
  resolve: (host: string) => Promise<string[]>;
  /** Replaces the hosts file (whole: CoreDNS must never read half of one). */
  write: (text: string) => Promise<void>;
  log: Logger;
  clock?: Clock;
}

/** How long a burst of events is gathered into one reconcile (a relist delivers every claim at once). */
export const DEBOUNCE_MS = 100;
/** How often host-name addresses are asked for again: a load balancer's addresses move. */
export const REFRESH_MS = 30_000;

export class InstanceNamesWatcher {
  private readonly timers: Timers;
  private readonly feeds: ClaimFeed[];
  private readonly dns: Resolutions;
  private isReady = false;
  private stopped = false;
  private debouncing = false;
  private running = false;
  private again = false;
  private written?: string;
  private writeFailures = 0;
  /** The problems logged and still there: each is said once until it goes away. */
  private said = new Set<string>();

  constructor(private readonly opts: WatcherOptions) {
    this.timers = new Timers(opts.clock ?? realClock);
    const changed = () => this.changed();
    this.feeds = opts.sources.map((s) => new ClaimFeed(s, this.timers, opts.log, changed));
    this.dns = new Resolutions(opts.resolve, changed);
  }

  /** True once the file was written from a complete list of every resource (for /readyz). */
  get ready(): boolean {
    return this.isReady;
  }

  start(): void {
    for (const feed of this.feeds) feed.start();
    this.refreshLoop();
  }

  stop(): void {
    this.stopped = true;
    this.timers.stop();
    for (const feed of this.feeds) feed.stop();
  }

  private refreshLoop(): void {
    this.timers.after(REFRESH_MS, () => void this.dns.refresh().finally(() => this.refreshLoop()));
  }

  private changed(): void {
    if (this.debouncing) return;
    this.debouncing = true;
    this.timers.after(DEBOUNCE_MS, () => {
      this.debouncing = false;
      void this.flush();
    });
  }

  /** Reconciles, one run at a time; a change during a run makes one more run after it. */
  private async flush(): Promise<void> {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    try {
      do {
        this.again = false;
        await this.reconcile();
      } while (this.again && !this.stopped);
    } finally {
      this.running = false;
    }
  }

  private async reconcile(): Promise<void> {
    // Until every resource is listed the file would lack names it had (it outlives a restart).
    if (!this.feeds.every((f) => f.listed)) return;
    const claims = this.feeds.flatMap((f) => f.all());
    const { records, problems } = recordsOf(claims, this.opts.zones);
    await this.dns.use(records.filter((r) => !isIPv4(r.address)).map((r) => r.address));
    if (this.stopped) return;
    const names = new Map<string, string[]>();
    for (const r of records) {
      const found = isIPv4(r.address) ? { ipv4: [r.address] } : this.dns.answer(r.address);
      if (found.problem) problems.push(`claim ${r.claim}: ${r.name}: ${found.problem}`);
      names.set(r.name, [...(names.get(r.name) ?? []), ...found.ipv4]);
    }
    this.report(problems);
    const served = [...names].filter(([, ipv4]) => ipv4.length > 0);
    const text = hostsFile(served.map(([name, ipv4]) => ({ name, ipv4 })));
    if (text !== this.written) {
      try {
        await this.opts.write(text);
      } catch (err) {
        const retryInMs = backoffDelay(++this.writeFailures, 1000, 30_000);
        this.opts.log("error", "writing the hosts file failed; trying again", {
          error: clientErrorMessage(err),
          retryInMs,
        });
        // The retry is this timer's: a change meanwhile brings it forward, never doubles it.
        this.again = false;
        return this.timers.after(retryInMs, () => this.changed());
      }
      this.writeFailures = 0;
      this.written = text;
      this.opts.log("info", "wrote the hosts file", { names: served.length, claims: claims.length });
    }
    this.isReady = true;
  }

  private report(problems: string[]): void {
    const now = new Set(problems);
    for (const p of now)
      if (!this.said.has(p)) this.opts.log("warn", "instance-name problem", { problem: p });
    this.said = now;
  }
}
