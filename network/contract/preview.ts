import type { NetworkPathObject } from "../../lib/bridge/api";
import type { Operation } from "../../lib/network-preview/schema";
import type { BridgeTarget } from "./bridge-target";

/**
 * What the network preview hands an implementation to predict a group's paths from, and what
 * the implementation answers: where consumers will dial each path after `up`, what the bridge
 * will refuse, and for one that hands out ports, its port plan. The preview itself knows no
 * implementation (programs/network-preview/plan/assemble.ts calls each spec's `planEndpoints`).
 */

/** What one engine preview said about one resource of the group's stack (a `resourcePreEvent`). */
export interface PreviewStep {
  urn: string;
  type: string;
  op: Operation;
  /** The resource's name (last URN segment). */
  name: string;
  oldInputs?: Record<string, unknown>;
  oldOutputs?: Record<string, unknown>;
  newInputs?: Record<string, unknown>;
  diffPaths: string[];
  replaceReasons: string[];
  deleteBeforeReplace: boolean;
}

/** A group as the preview plans it: its paths after the change and its stack's previewed steps. */
export interface PreviewGroup {
  group: string;
  paths: NetworkPathObject[];
  target: BridgeTarget;
  steps: readonly PreviewStep[];
}

/** A port plan an implementation predicts for a group (the report's `ports` entry). */
export interface PlannedPorts {
  rangeBefore?: { from: number; to: number };
  rangeAfter: { from: number; to: number };
  /** Listener → port before (the stack's state); empty for a new group. */
  before: Record<string, number>;
  /** Listener → port after, or "unknown" when the preview cannot tell. */
  after: Record<string, number> | "unknown";
  /** Ports of the range the implementation keeps for itself: they count as used. */
  ownPorts: number;
  unplaced?: string[];
}

/** Where the bridge program will place each of a group's paths, predicted from the paths and the steps. */
export interface PlannedEndpoints {
  /** Where consumers will dial each served path; port "unknown" where the preview cannot tell. */
  endpoints: Record<string, { hostForConsumer: string; port: number | "unknown" }>;
  /** Why each path it cannot serve is refused (on that path alone). */
  rejected: Record<string, string>;
  /** Set when the group as a whole cannot be served (every path gets it). */
  refusal?: string;
  /** Why a path it serves will still not work after `up` (no port left for it). */
  broken?: Record<string, string>;
  /** Its port plan, for an implementation that hands out ports. */
  ports?: PlannedPorts;
  /** A line to show on a step's hop, by step name (a port range that moves). */
  stepDetails?: Record<string, string>;
}
