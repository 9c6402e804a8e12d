import type { z } from "zod";
import type { AddIssue, Located } from "../../lib/config/located";
import type { NetworkPathObject } from "../../lib/bridge/api";
import type { AppClusterConfig, ControlPlaneConfig } from "../../lib/config/schema";
import type { BridgeTarget, GroupProgram } from "./bridge-target";
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
 * Where a forwarded implementation's bridge program will place each path, predicted from the
 * paths alone (its own planner, the one the program runs), for the network preview.
 */
export interface PlannedEndpoints {
  /** Where consumers will dial each served path. */
  endpoints: Record<string, { hostForConsumer: string; port: number }>;
  /** Why each path it cannot serve is refused (on that path alone). */
  rejected: Record<string, string>;
  /** Set when the group as a whole cannot be served (every path gets it). */
  refusal?: string;
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
   * For the network preview: where the bridge program will place the group's paths, when that
   * is the implementation's own planning (a forwarded one). Absent: proxies are predicted from
   * the port allocation's preview, routed paths report the instance itself.
   */
  planEndpoints?(group: string, paths: NetworkPathObject[], target: BridgeTarget): PlannedEndpoints;
  /** Whether the bridge's data-plane identity must list nodes (a path that reports a node's address). */
  needsNodeList?(connector: z.output<Schema>): boolean;
  /** Whether the bridge's data-plane identity must read instance Services and their endpoints. */
  needsInstanceReads?(connector: z.output<Schema>): boolean;
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
  };
}

/** The settings of one implementation, whatever its schema. */
export type ConnectorOf<S extends ImplementationSpec> = z.output<S["schema"]>;
