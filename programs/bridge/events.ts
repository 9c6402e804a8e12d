import * as crypto from "node:crypto";
import * as os from "node:os";
import * as k8s from "@kubernetes/client-node";
import {
  NETWORK_PATH_GROUP,
  NETWORK_PATH_VERSION,
  eventKey,
  type NetworkPathObject,
} from "../../lib/bridge/model";
import { clientErrorMessage } from "../../lib/kube/client-errors";
import type { Logger } from "./log";

/** What a NetworkPath's Events say, one reason per reconcile outcome. */
export type PathEventReason =
  | "PathReady"
  | "ProbeFailed"
  | "ReconcileError"
  | "PortRangeExhausted"
  | "InvalidConnection"
  | "ForwarderFailed"
  | "HostUnresolved"
  | "NodePortAllocated"
  | "CheckpointRestored"
  | "CheckpointRepaired"
  | "CheckpointRecreated"
  | "Released"
  | "DriftDetected"
  | "DriftCorrected";

/**
 * Records core/v1 Events on NetworkPaths, as client-go's recorder does: a repeat of the same
 * (object, type, reason, message) within ten minutes bumps the first Event's count and
 * lastTimestamp instead of creating another, so a group failing in a backoff loop does not
 * flood the API server. NetworkPaths are cluster-scoped, so their Events live in `default`
 * (where kubectl and client-go put Events of cluster-scoped objects). Best effort: a failed
 * Event write is logged and never fails a reconcile.
 */
export class EventRecorder {
  private readonly core: k8s.CoreV1Api;
  private readonly seen = new Map<string, { name: string; count: number; first: string; at: number }>();
  private readonly host = os.hostname();

  constructor(
    kc: k8s.KubeConfig,
    private readonly log: Logger,
    private readonly namespace = "default",
  ) {
    this.core = kc.makeApiClient(k8s.CoreV1Api);
  }

  async record(
    p: NetworkPathObject,
    type: "Normal" | "Warning",
    reason: PathEventReason,
    message: string,
  ): Promise<void> {
    const now = new Date();
    const text = message.length > 1024 ? `${message.slice(0, 1021)}...` : message;
    const key = eventKey(p, type, reason, text);
    const prior = this.seen.get(key);
    try {
      if (prior && now.getTime() - prior.at < 10 * 60_000) {
        prior.count += 1;
        prior.at = now.getTime();
        await this.core.patchNamespacedEvent(
          {
            name: prior.name,
            namespace: this.namespace,
            body: { count: prior.count, lastTimestamp: now.toISOString() },
          },
          k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
        );
        return;
      }
      const name = `${p.metadata.name}.${crypto.randomBytes(8).toString("hex")}`;
      this.seen.set(key, { name, count: 1, first: now.toISOString(), at: now.getTime() });
      this.trim(now.getTime());
      await this.core.createNamespacedEvent({
        namespace: this.namespace,
        body: {
          metadata: { name, namespace: this.namespace },
          involvedObject: {
            apiVersion: `${NETWORK_PATH_GROUP}/${NETWORK_PATH_VERSION}`,
            kind: "NetworkPath",
            name: p.metadata.name,
            ...(p.metadata.uid ? { uid: p.metadata.uid } : {}),
          },
          type,
          reason,
          message: text,
          count: 1,
          // The API server keeps these as given; a Date would be sent as ISO text anyway.
          firstTimestamp: now,
          lastTimestamp: now,
          source: { component: "klutch-bridge", host: this.host },
          reportingComponent: "klutch.anynines.com/bridge",
          reportingInstance: this.host,
        },
      });
    } catch (e) {
      // The Event expired (TTL) while we counted it: start a new one next time.
      this.seen.delete(key);
      this.log("warn", "could not record an event", {
        path: p.metadata.name,
        reason,
        error: clientErrorMessage(e),
      });
    }
  }

  /** Forget aggregation keys older than the window, so the map stays small. */
  private trim(now: number): void {
    if (this.seen.size < 4096) return;
    for (const [k, v] of this.seen) if (now - v.at > 10 * 60_000) this.seen.delete(k);
  }
}
