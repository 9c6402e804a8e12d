import { nodePortHosts, type NodeLike, type NodePortHosts } from "../../lib/bridge/node-host";
import type { Logger } from "./log";
import { realClock, type Clock } from "./workqueue";

export interface PollingWatchOptions<T> {
  /** One read of what is watched; a rejection is logged once per failing streak. */
  read: () => Promise<T>;
  /** Whether anything needs the read now (no read otherwise). */
  wanted: () => boolean;
  /** Awaited before the next poll is scheduled. */
  onRead: (value: T) => void | Promise<void>;
  intervalMs: number;
  log: Logger;
  /** What the log says when reads start failing (with the error) and when they work again. */
  messages: { failing: string; recovered: string };
  clock?: Clock;
}

/**
 * Reads something outside the bridge's NetworkPaths every `intervalMs` while some group needs
 * it, and hands it over; each user compares with what each group was last run with (level-based),
 * never with an earlier read, so a change between a group's run and the next read is not missed.
 * A poll, not a watch: one read per interval costs the API server less than a watch of objects
 * that change often (nodes' status every 10 s, endpoints on every probe), and needs `list`/`get`
 * only.
 */
export class PollingWatch<T> {
  private timer: unknown;
  private failing = false;
  private stopped = false;
  private polling = false;
  /** A kick came while a round ran: the next round starts as soon as this one ends. */
  private kicked = false;

  constructor(private readonly opts: PollingWatchOptions<T>) {}

  start(): void {
    void this.poll();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) (this.opts.clock ?? realClock).clearTimeout(this.timer);
  }

  /**
   * A round now instead of at the next tick (an event says what is watched changed); kicks
   * while a round runs make one more round right after it, never two at once.
   */
  kick(): void {
    if (this.stopped) return;
    if (this.polling) {
      this.kicked = true;
      return;
    }
    void this.poll();
  }

  /** One round: read, hand over, schedule the next. Never throws. */
  async poll(): Promise<void> {
    const clock = this.opts.clock ?? realClock;
    if (this.timer !== undefined) clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.polling = true;
    try {
      if (!this.opts.wanted()) return;
      const value = await this.opts.read();
      if (this.failing) this.opts.log("info", this.opts.messages.recovered);
      this.failing = false;
      await this.opts.onRead(value);
    } catch (e) {
      // Once per failing streak: a bridge whose identity may not read says so once.
      if (!this.failing) this.opts.log("warn", this.opts.messages.failing, { error: (e as Error).message });
      this.failing = true;
    } finally {
      this.polling = false;
      const delay = this.kicked ? 0 : this.opts.intervalMs;
      this.kicked = false;
      if (!this.stopped) this.timer = clock.setTimeout(() => void this.poll(), delay);
    }
  }
}

/**
 * Lists the data plane's nodes every `intervalMs` while some group's proxy reports a node
 * (a NodePort Service), and hands the hosts a proxy would report now to `onHosts`, which runs
 * again each group realised with another (its node was drained, deleted or replaced): nothing
 * else queues those groups, so without this a path would keep naming a node that is gone.
 * Compared with the host each group was realised with (StackRunner.nodeHostMoved). The
 * data-plane identity needs `list` nodes only.
 */
export class NodeHostWatch extends PollingWatch<NodePortHosts> {
  constructor(opts: {
    list: () => Promise<NodeLike[]>;
    /** Whether any live group's proxy reports a node now (no list otherwise). */
    wanted: () => boolean;
    onHosts: (hosts: NodePortHosts) => void;
    intervalMs: number;
    log: Logger;
    clock?: Clock;
  }) {
    super({
      read: async () => nodePortHosts(await opts.list()),
      wanted: opts.wanted,
      onRead: opts.onHosts,
      intervalMs: opts.intervalMs,
      log: opts.log,
      messages: {
        failing: "cannot list the data plane's nodes; NodePort hosts stay as they are",
        recovered: "listing the data plane's nodes works again",
      },
      ...(opts.clock ? { clock: opts.clock } : {}),
    });
  }
}
