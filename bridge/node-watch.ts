import { nodePortHosts, type NodeLike, type NodePortHosts } from "../lib/bridge/node-host";
import type { Logger } from "./log";
import { realClock, type Clock } from "./workqueue";

/**
 * Lists the data plane's nodes every `intervalMs` while some group's proxy reports a node
 * (a NodePort Service), and hands the hosts a proxy would report now to `onHosts`, which runs
 * again each group realised with another (its node was drained, deleted or replaced): nothing
 * else queues those groups, so without this a path would keep naming a node that is gone.
 * Level-based: each round compares with the host each group was realised with
 * (StackRunner.nodeHostMoved), never with an earlier list, so a change between a group's run
 * and the next list is not missed. A poll, not a watch: one list per interval costs the API
 * server less than a watch of every node's status (kubelets update it every 10 s), and the
 * data-plane identity needs `list` only.
 */
export class NodeHostWatch {
  private timer: unknown;
  private failing = false;
  private stopped = false;

  constructor(
    private readonly opts: {
      list: () => Promise<NodeLike[]>;
      /** Whether any live group's proxy reports a node now (no list otherwise). */
      wanted: () => boolean;
      onHosts: (hosts: NodePortHosts) => void;
      intervalMs: number;
      log: Logger;
      clock?: Clock;
    },
  ) {}

  start(): void {
    void this.poll();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) (this.opts.clock ?? realClock).clearTimeout(this.timer);
  }

  /** One round: list, hand over, schedule the next. Never throws. */
  async poll(): Promise<void> {
    try {
      if (!this.opts.wanted()) return;
      const hosts = nodePortHosts(await this.opts.list());
      if (this.failing) this.opts.log("info", "listing the data plane's nodes works again");
      this.failing = false;
      this.opts.onHosts(hosts);
    } catch (e) {
      // Once per failing streak: a bridge whose identity may not list nodes says so once.
      if (!this.failing)
        this.opts.log("warn", "cannot list the data plane's nodes; NodePort hosts stay as they are", {
          error: (e as Error).message,
        });
      this.failing = true;
    } finally {
      if (!this.stopped)
        this.timer = (this.opts.clock ?? realClock).setTimeout(() => void this.poll(), this.opts.intervalMs);
    }
  }
}
