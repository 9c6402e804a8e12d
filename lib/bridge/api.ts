/**
 * The NetworkPath API as the bridge sees it: the resource's coordinates, the fields it reads
 * and writes, and what a path's realisation reports (an endpoint, or why not).
 */

export { NETWORK_PATH_GROUP, NETWORK_PATH_PLURAL, NETWORK_PATH_VERSION } from "../connector-api/names";
/** Held on every NetworkPath the bridge realised, until its path is gone. */
export const BRIDGE_FINALIZER = "klutch.anynines.com/network-path";

export interface Condition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

/** The fields of a NetworkPath the bridge reads. */
export interface NetworkPathObject {
  metadata: {
    name: string;
    uid?: string;
    generation?: number;
    deletionTimestamp?: string;
    finalizers?: string[];
    resourceVersion?: string;
    /** Crossplane makes the composite (XTCPConnection) the controller owner of what it composes. */
    ownerReferences?: { apiVersion: string; kind: string; name: string; controller?: boolean }[];
  };
  spec: {
    implementation: string;
    connection: string;
    /** The claim's namespace; absent for an XTCPConnection made without a claim. */
    consumerNamespace?: string;
    instanceHost: string;
    port: number;
    enhancements?: Record<string, unknown>[];
  };
  status?: {
    hostForConsumer?: string;
    port?: number;
    observedGeneration?: number;
    conditions?: Condition[];
  };
}

/**
 * Why one path of a group is not realised while the others are (reported on that path
 * only, as Ready=False and Synced=False with this reason).
 */
export interface PathProblem {
  /**
   * ForwarderFailed: a forwarded path's forwarder does not listen (its message says why).
   * HostUnresolved: its instance host name gave no address where the path is realised.
   */
  reason: "PortRangeExhausted" | "InvalidConnection" | "ForwarderFailed" | "HostUnresolved";
  message: string;
}

/** What a group's program reports for one realised path (not the probe's target, network/shared/connectivity-probe.ts). */
export interface PathEndpoint {
  hostForConsumer: string;
  port: number;
  /** Set when the program probed the endpoint; a failed probe makes the path Ready=False. */
  probe?: { ready: boolean; reason: string; message: string };
}

/** The reasons the bridge writes into a path's Ready and Synced conditions. */
export type ConditionReason =
  "ConnectivityEstablished" | "ReconcileSuccess" | "ReconcileError" | PathProblem["reason"];
