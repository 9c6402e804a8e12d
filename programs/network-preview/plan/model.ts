import type { NetworkPathObject } from "../../../lib/bridge/model";
import type { NodeLike } from "../../../lib/bridge/node-host";
import type { BridgeSettings } from "../../../lib/bridge/settings";
import type { BridgeTarget as Target } from "../../../network/contract/bridge-target";
import type { PortRange } from "../../../lib/net/port-range";

/** One TCPConnection from the connections file. */
export interface ClaimChange {
  action: "apply" | "delete";
  namespace: string;
  name: string;
  implementation: string;
  instanceHost: string;
  port: number;
  enhancements?: Record<string, unknown>[];
}

/** The control plane as the bridge sees it: every managed NetworkPath, and each claim's XR. */
export interface ControlPlaneView {
  paths: NetworkPathObject[];
  /** `namespace/claim` → the XR name (claim.spec.resourceRef.name), for claims that exist. */
  claimXr: Map<string, string>;
}

/**
 * How the bridge plans its groups: the same flags as programs/bridge/main.ts, since the preview must
 * plan as it does. Plain data; where the bridge keeps its state is the engine's concern.
 */
export interface BridgeLayout {
  /**
   * Where the bridge runs each group's proxy (programs/bridge/target-options.ts, the bridge's own flags):
   * local HAProxy processes in a port block of the range, or TcpProxy on a cluster.
   */
  target: Target;
  /**
   * The settings the kubernetes target builds each group with (lib/bridge/settings.ts): what
   * the environment change plans, else what the settings ConfigMap holds now; none without either.
   */
  settings?: { value: BridgeSettings; from: "planned" | "live" };
  /**
   * The data plane's nodes as the preview listed them (kubernetes target), for the host a
   * NodePort proxy reports: the bridge picks it from the nodes on each run the same way.
   */
  nodes?: NodeLike[];
  portRange: PortRange;
  slotSize: number;
  /** The bridge's --max-ports-per-group (default: its whole range). */
  maxPortsPerGroup?: number;
  bindAddress: string;
}

export interface GroupPlan {
  key: string;
  /** Paths as the group stack would be run with after the change (live, not deleting). */
  after: NetworkPathObject[];
  /** Paths the group has now (realised or not). */
  before: NetworkPathObject[];
  added: ClaimChange[];
  deletedIds: Set<string>;
}
