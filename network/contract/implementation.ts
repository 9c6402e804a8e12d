import type { z } from "zod";
import type { AddIssue, Located } from "../../lib/config/located";
import type { NetworkPathObject } from "../../lib/bridge/api";
import type { ConfigIssue } from "../../lib/config/messages";
import type { AppClusterConfig, ControlPlaneConfig, EnvironmentConfig } from "../../lib/config/schema";
import type { BridgeTarget, GroupProgram } from "./bridge-target";
import type { PlannedEndpoints, PreviewGroup } from "./preview";
import type { EnvironmentPart } from "./environment-context";
import type { ProviderSurface } from "./provider-surface";

/**
 * What a network implementation is, as plain data: each implementation's folder declares one
 * (network/<implementation>/model/spec.ts), the registry (network/registry.ts) lists them, and
 * the config schema, validation, the environment, the compositions and the bridge read it.
 * Pure: the Pulumi side of an implementation (what the environment builds, the bridge's
 * per-group program) is named by loaders the spec declares (`pulumi`), which load their module
 * only when called, so the config, validation and the bridge load no cloud SDK they do not use.
 * network/plugins/ calls them for every registered implementation.
 */

/**
 * How the bridge realises an implementation's paths:
 * - `proxy`: a TCP proxy per group; hostForConsumer is the proxy;
 * - `routed`: the environment stack built a routed network between the app cluster and the
 *   data services (VPC peering, OpenStack routes and security groups), so consumers dial
 *   the instance itself; the bridge probes it and reports it;
 * - `forwarded`: a tunnel the environment built (WireGuard), plus a forwarder per connection
 *   on the app side that the bridge realises; hostForConsumer is the forwarder;
 * - `ignored`: NOOP, whose marker NetworkPath nobody realises.
 */
export type Realisation = "proxy" | "routed" | "forwarded" | "ignored";

export type { AddIssue, ConfigPath, Located } from "../../lib/config/located";
export type { PlannedEndpoints, PlannedPorts, PreviewGroup, PreviewStep } from "./preview";

/** What an implementation's cross-setting rules see. */
export interface ConnectorCheckInput<C> {
  /** The app clusters that use this implementation, each with its connector settings. */
  users: (Located<AppClusterConfig> & { connector: C })[];
  /** Every well-formed app cluster, whatever it uses. */
  appClusters: Located<AppClusterConfig>[];
  /** The control plane, when its entry is well-formed. */
  controlPlane?: Located<ControlPlaneConfig>;
  add: AddIssue;
}

/** A kubernetes target, as an implementation's settings may overlay it. */
export type KubernetesTarget = Extract<BridgeTarget, { kind: "kubernetes" }>;

/**
 * What the environment stack tells the bridge for each app cluster that uses the
 * implementation (network/plugins/bridge-settings.ts writes it, keyed by the implementation's
 * name, into the bridge's settings ConfigMap; the bridge checks it with `schema` when it reads it).
 */
export interface BridgeSettingsSpec<Connector, Settings extends z.ZodTypeAny> {
  readonly schema: Settings;
  /** The settings known from the config alone; settings known once built come from `pulumi.environment`. */
  of?(app: AppClusterConfig, connector: Connector): z.output<Settings> | undefined;
  /** How the settings shape the group's target (the bridge's flags), besides `target.settings`. */
  applyToTarget?(target: KubernetesTarget, settings: z.output<Settings>): KubernetesTarget;
}

/**
 * What a group's target depends on besides its paths and settings, which the bridge reads
 * before each run and polls for moves (the proxy's kernel hop: its instances' ready endpoints,
 * network/proxy/instance-backends.ts). Level-based: compared with what each group last ran with.
 */
export interface TargetFollower {
  /** Whether the bridge follows this group (its target says so). */
  follows(key: string): boolean;
  /** The target the group runs with: what it follows, read now. */
  realise<T extends KubernetesTarget>(key: string, target: T, live: readonly NetworkPathObject[]): Promise<T>;
  /** Whether what the group follows is other now than it last ran with. */
  moved(key: string, live: readonly NetworkPathObject[]): Promise<boolean>;
  /** Forgets a group whose stack is gone. */
  forget(key: string): void;
  /** What the bridge logs when a move runs groups again, and when reading fails or works again. */
  readonly messages: { moved: string; failing: string; recovered: string };
}

/** What a path's own data path says of it now: whether a connection through it reaches the instance. */
export interface PathHealth {
  ready: boolean;
  /** Why not (`InstanceUnreachable`, `ProxyUnavailable`), or why it is. */
  reason: string;
  message: string;
}

/**
 * Reads each path's health from its implementation's data path (the proxy: HAProxy's own
 * health checks), so Ready means a client can use it now. Read after each run of a group and
 * polled (programs/bridge/controller.ts); the bridge writes a change on the path and its claim.
 * On either target: a cluster's, and this machine's (the proxy's HAProxy processes).
 */
export interface HealthReader {
  /** Whether this group's health can be read (its target says so: the proxy's HAProxy hop). */
  reads(key: string, target: BridgeTarget): boolean;
  /**
   * Each path's health, by path id. A path left out is left as its run reported it (the data
   * path did not answer: the bridge cannot reach it, which is no reason to call it broken).
   */
  read(
    key: string,
    target: BridgeTarget,
    live: readonly NetworkPathObject[],
  ): Promise<Record<string, PathHealth>>;
}

/**
 * What only the data-service cluster's API server can say of an implementation's settings (the
 * proxy: whether it takes the node ports, where its range is not known from the infrastructure),
 * asked on `up` and `preview` before anything is registered (programs/stack/program.ts).
 */
export interface ServerCheckInput {
  config: EnvironmentConfig;
  /** The control plane's kubeconfig (its text) and context, where the config names one. */
  kubeconfig: string;
  context?: string;
  /**
   * A preview: ask nothing that writes. A question that can only be asked by creating something
   * (the proxy's node ports) waits for `up`; reads and server-side dry-runs are asked.
   */
  preview: boolean;
}

/** What asking gave: the issues that refuse the run, and what could not be asked (said, not refused). */
export interface ServerCheckAnswers {
  issues: ConfigIssue[];
  notes: string[];
}

/** What asks the data-service cluster's API server for one implementation. */
export type ServerCheck = (input: ServerCheckInput) => Promise<ServerCheckAnswers>;

/** What a health reader is made from: the data-service cluster, where the bridge's target is one. */
export interface HealthReaderOptions {
  kubeconfig?: string;
}

/** What a follower is made from: the data-service cluster, and each group's target as last read. */
export interface TargetFollowerOptions {
  kubeconfig: string;
  targetOf: (key: string) => KubernetesTarget | undefined;
}

export interface ImplementationSpec<
  Name extends string = string,
  Schema extends z.ZodTypeAny = z.ZodTypeAny,
  Settings extends z.ZodTypeAny = z.ZodTypeAny,
> {
  /** The `networkConnector.implementation` value, the composition label and the bridge's group suffix. */
  readonly name: Name;
  readonly realisation: Realisation;
  /** One line for the README and error messages. */
  readonly summary: string;
  /** The `networkConnector` settings of an app cluster that uses it (a zod object with `implementation: literal(name)`). */
  readonly schema: Schema;
  /** Rules that relate its settings to the clusters'; every problem is reported through `add`. */
  check?(input: ConnectorCheckInput<z.output<Schema>>): void;
  /** What the bridge is told per app cluster, if anything. */
  readonly bridgeSettings?: BridgeSettingsSpec<z.output<Schema>, Settings>;
  /**
   * For the network preview: where the bridge program will place the group's paths, predicted
   * with the implementation's own planning (the one its program runs) from the paths and the
   * group stack's previewed steps (network/contract/preview.ts). Absent: consumers dial the
   * instance itself (routed), and the bridge refuses no path.
   */
  planEndpoints?(group: PreviewGroup): PlannedEndpoints;
  /**
   * The ports the group's program holds on the target's port range, for the local target
   * (the bridge places whole slots of its --port-range to hold them, programs/bridge/slot-store.ts).
   * Absent: it holds none, and the group gets the one slot every group has.
   */
  localPorts?(paths: readonly NetworkPathObject[]): number;
  /**
   * For the network preview: the target as the bridge would build it, where the bridge reads
   * something before the run that the preview cannot (a follower's reads); `note` says what it assumed.
   */
  previewTarget?(
    target: KubernetesTarget,
    paths: readonly NetworkPathObject[],
    note: (line: string) => void,
  ): KubernetesTarget;
  /** What is wrong with the bridge's own flags for this implementation (programs/bridge/target-options.ts). */
  targetProblem?(target: KubernetesTarget): string | undefined;
  /** Whether the bridge's data-plane identity must list nodes (a path that reports a node's address). */
  needsNodeList?(connector: z.output<Schema>): boolean;
  /** Whether the bridge's data-plane identity must read instance Services and their endpoints. */
  needsInstanceReads?(connector: z.output<Schema>): boolean;
  /** Whether it must write EndpointSlices in the proxies' namespace (a path it forwards by Service and slice). */
  needsSliceWrites?(connector: z.output<Schema>): boolean;
  /**
   * The Pulumi side, each loaded only when called (a `require` inside the function, the one
   * place a spec may reach above its pure layer: .dependency-cruiser.cjs allows exactly that,
   * and network/registry.test.ts proves that loading the registry loads no Pulumi module).
   */
  readonly pulumi: {
    /** What the environment stack builds for the app clusters that use it; nothing when absent. */
    environment?: () => EnvironmentPart<z.output<Schema>>;
    /** The bridge's per-group program; absent for an implementation no bridge realises (NOOP). */
    bridge?: () => GroupProgram;
    /** The components it serves through the klutch provider (its `provider/` folder). */
    provider?: () => ProviderSurface;
    /** What the bridge follows for its groups on a cluster, besides their paths (no Pulumi, a Kubernetes client). */
    follower?: () => (opts: TargetFollowerOptions) => TargetFollower;
    /** How the bridge reads its paths' health, on a cluster (a Kubernetes client) or this machine (the proxy: its HAProxy processes, as LocalHaproxy knows them). */
    health?: () => (opts: HealthReaderOptions) => HealthReader;
    /** What it asks the data-service cluster's API server before `up` or `preview` registers anything (a Kubernetes client). */
    serverCheck?: () => ServerCheck;
  };
}

/** The settings of one implementation, whatever its schema. */
export type ConnectorOf<S extends ImplementationSpec> = z.output<S["schema"]>;
