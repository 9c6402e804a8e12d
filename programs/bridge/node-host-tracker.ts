import {
  internalConsumers,
  nodeHostMoved,
  nodePortHost,
  picksNodeHost,
  type NodeLike,
  type NodePortHosts,
} from "../../lib/bridge/node-host";
import type { RunOptions } from "./group-stacks";

/** What the tracker reads of a group's kubernetes target. */
export interface NodeHostTarget {
  serviceType: string;
  nodeHost?: string;
  exposure?: { internal: boolean };
}

export interface NodeHostTrackerOptions {
  /** The group's kubernetes target as of the settings last read; undefined on the local target. */
  targetOf: (key: string) => NodeHostTarget | undefined;
  /**
   * The data-service cluster's nodes (kubernetes target), for the host a NodePort proxy
   * reports when `--node-host` gives none (lib/bridge/node-host.ts). Without it the bridge
   * picks no node.
   */
  nodes?: () => Promise<NodeLike[]>;
}

/**
 * The node host each NodePort group's proxy reports: picked from the nodes on each run, and
 * remembered as run, so the node watch (programs/bridge/node-watch.ts) can run again exactly the groups
 * that would report another node now. Level-based: compared with what each group last ran
 * with, never with an earlier node list.
 */
export class NodeHostTracker {
  /** The node host each NodePort group was last run with (undefined: none was found). */
  private readonly realised = new Map<string, string | undefined>();

  constructor(private readonly opts: NodeHostTrackerOptions) {}

  /**
   * Whether the group's proxy reports a node the bridge picked, as of the settings last read:
   * such groups run again when the nodes change (programs/bridge/node-watch.ts).
   */
  picksNodeHostFor(key: string): boolean {
    const target = this.opts.targetOf(key);
    return target !== undefined && this.picks(target);
  }

  /**
   * Whether a group's proxy would report another node now than the one it was last run with.
   * A group not run yet is queued by the cache anyway.
   */
  nodeHostMoved(key: string, hosts: NodePortHosts): boolean {
    const target = this.opts.targetOf(key);
    if (!target || !this.picks(target) || !this.realised.has(key)) return false;
    return nodeHostMoved(this.realised.get(key), hosts, internalConsumers(target));
  }

  /**
   * The target a group runs with: for a NodePort proxy whose host the bridge picks, a node's
   * address (remembered as the group's); any other target as it is.
   */
  async realise<T extends NodeHostTarget>(key: string, target: T, log: RunOptions["log"]): Promise<T> {
    if (!this.picks(target)) return target;
    const nodeHost = await this.pick(internalConsumers(target), log);
    this.realised.set(key, nodeHost);
    return nodeHost ? { ...target, nodeHost } : target;
  }

  /** Forgets a group whose stack is gone. */
  forget(key: string): void {
    this.realised.delete(key);
  }

  /** A NodePort proxy whose host the bridge picks from the nodes (no --node-host). */
  private picks(target: NodeHostTarget): boolean {
    return picksNodeHost(target) && this.opts.nodes !== undefined;
  }

  /**
   * A node address for a NodePort group's consumers, read on each run (nodes come and go).
   * Without one (no Ready node, or the nodes cannot be listed) the proxy reports its Service's
   * cluster DNS name, and the log says why.
   */
  private async pick(internal: boolean, log: RunOptions["log"]): Promise<string | undefined> {
    try {
      const host = nodePortHost(await this.opts.nodes!(), internal);
      if (!host) log("warn", "no Ready node with an address for the NodePort proxy's consumers");
      return host;
    } catch (e) {
      log("warn", "cannot list the data plane's nodes for the NodePort proxy's consumers", {
        error: (e as Error).message,
      });
      return undefined;
    }
  }
}
