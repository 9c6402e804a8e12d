import type { z } from "zod";
import type { AddIssue, Located } from "../../lib/config/located";
import type { AppClusterConfig, ControlPlaneConfig } from "../../lib/config/schema";

/**
 * What a network implementation is, as plain data: each implementation's folder declares one
 * (network/<implementation>/model/spec.ts), the registry (network/registry.ts) lists them, and
 * the config schema, validation, the environment, the compositions and the bridge read it.
 * Pure: the Pulumi side of an implementation (what the environment builds, the bridge's
 * per-group program, the bridge's settings) is gathered in network/plugins/.
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

export interface ImplementationSpec<
  Name extends string = string,
  Schema extends z.ZodTypeAny = z.ZodTypeAny,
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
}

/** The settings of one implementation, whatever its schema. */
export type ConnectorOf<S extends ImplementationSpec> = z.output<S["schema"]>;
