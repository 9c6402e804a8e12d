/**
 * One resource's claims as the watcher keeps them: listed, then watched from the list's version;
 * watched again from the last version seen when a watch just ends, listed again when it fails.
 * A resource the API server does not serve (404: no binding of that API in this cluster yet, and
 * so no CRD) has no claims, and is listed again every ABSENT_RETRY_MS until it is.
 */
import { backoffDelay } from "../../lib/bridge/backoff";
import type { ClaimLike } from "../../lib/instance-names/records";
import { clientErrorMessage } from "../../lib/kube/client-errors";
import type { Logger } from "../bridge/log";
import type { Timers } from "./timers";

export type WatchedClaim = ClaimLike & { metadata: { resourceVersion?: string } };
export type ClaimEvent = "add" | "update" | "delete" | "bookmark";

/** One resource's claims: its list, and a watch of the changes after it (kube-source.ts; fakes in tests). */
export interface ClaimSource {
  /** `group/version/plural`, for the logs. */
  readonly resource: string;
  /** Every claim, cluster-wide; rejects with `code` or `statusCode` 404 when the API is not served. */
  list(): Promise<{ items: WatchedClaim[]; resourceVersion: string }>;
  /**
   * Changes from `resourceVersion` on, until `done`: without an error when the watch just ended
   * (the server's or the client's timeout: watched again from the last version), with one to relist.
   */
  watch(
    resourceVersion: string,
    event: (type: ClaimEvent, claim: WatchedClaim) => void,
    done: (err?: unknown) => void,
  ): Promise<{ stop(): void }>;
}

export const ABSENT_RETRY_MS = 10_000;

const code = (err: unknown) =>
  (err as { code?: number } | undefined)?.code ?? (err as { statusCode?: number } | undefined)?.statusCode;
const claimKey = (c: ClaimLike) => `${c.metadata.namespace ?? ""}/${c.metadata.name ?? ""}`;

export class ClaimFeed {
  private claims = new Map<string, WatchedClaim>();
  private version = "";
  private isListed = false;
  private absent = false;
  private failures = 0;
  private stopped = false;
  private stopWatch?: () => void;

  constructor(
    private readonly source: ClaimSource,
    private readonly timers: Timers,
    private readonly log: Logger,
    /** Called on every change of the claims (a relist calls it once). */
    private readonly changed: () => void,
  ) {}

  /** Listed at least once (a resource not served counts: it has no claims). */
  get listed(): boolean {
    return this.isListed;
  }

  all(): WatchedClaim[] {
    return [...this.claims.values()];
  }

  start(): void {
    void this.list();
  }

  stop(): void {
    this.stopped = true;
    this.stopWatch?.();
  }

  private async list(): Promise<void> {
    const resource = this.source.resource;
    let list: Awaited<ReturnType<ClaimSource["list"]>>;
    try {
      list = await this.source.list();
    } catch (err) {
      if (this.stopped) return;
      if (code(err) === 404) {
        if (!this.absent)
          this.log(
            "info",
            "the claims' resource is not served in this cluster yet: no claims; listed again",
            {
              resource,
              retryInMs: ABSENT_RETRY_MS,
            },
          );
        this.absent = this.isListed = true;
        this.failures = 0;
        this.claims.clear();
        this.changed();
        return this.timers.after(ABSENT_RETRY_MS, () => void this.list());
      }
      const retryInMs = backoffDelay(++this.failures, 500, 10_000);
      this.log("warn", "listing the claims failed; listing again", {
        resource,
        error: clientErrorMessage(err),
        retryInMs,
      });
      return this.timers.after(retryInMs, () => void this.list());
    }
    if (this.stopped) return;
    if (this.absent) this.log("info", "the claims' resource is served now", { resource });
    this.absent = false;
    this.isListed = true;
    this.version = list.resourceVersion;
    this.claims = new Map(list.items.map((c) => [claimKey(c), c]));
    this.changed();
    await this.watch();
  }

  private async watch(): Promise<void> {
    const began = this.timers.clock.now();
    let ended = false;
    const done = (err?: unknown) => {
      if (ended || this.stopped) return;
      ended = true;
      this.stopWatch = undefined;
      if (err === undefined) {
        this.failures = 0;
        // A watch the server ends at once is not asked for again in a tight loop.
        const wait = this.timers.clock.now() - began < 1000 ? 1000 : 0;
        return this.timers.after(wait, () => void this.watch());
      }
      // 410 Gone: the version is too old to watch from (the API server keeps a short history).
      const gone = code(err) === 410;
      const retryInMs = gone ? 0 : backoffDelay(++this.failures, 500, 10_000);
      this.log(gone ? "info" : "warn", "the claims' watch ended; listing again", {
        resource: this.source.resource,
        error: clientErrorMessage(err),
        retryInMs,
      });
      this.timers.after(retryInMs, () => void this.list());
    };
    const event = (type: ClaimEvent, claim: WatchedClaim) => {
      if (ended || this.stopped) return;
      this.version = claim.metadata.resourceVersion ?? this.version;
      if (type === "bookmark") return;
      if (type === "delete") this.claims.delete(claimKey(claim));
      else this.claims.set(claimKey(claim), claim);
      this.changed();
    };
    try {
      const handle = await this.source.watch(this.version, event, done);
      if (ended || this.stopped) handle.stop();
      else this.stopWatch = () => handle.stop();
    } catch (err) {
      done(err ?? new Error("the watch could not start"));
    }
  }
}
