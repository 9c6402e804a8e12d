import type * as pulumi from "@pulumi/pulumi";
import type { AppClusterConfig, EnvironmentConfig } from "../../lib/config/schema";
import type { ClusterAccess } from "../../clusters/types";

/** What an implementation's environment builder gets: the whole environment and its clusters. */
export interface EnvironmentNetworkContext {
  /** The environment component's name; children are named from it. */
  name: string;
  config: EnvironmentConfig;
  controlPlane: ClusterAccess;
  appClusters: Record<string, ClusterAccess>;
  parent: pulumi.Resource;
  /**
   * The namespaces the environment creates, by `<cluster>/<namespace>`: a builder that places
   * objects in one depends on it, so a first `up` never races the namespace's creation.
   */
  namespaces: Readonly<Record<string, pulumi.Resource>>;
  /**
   * The control plane's node where it is a local cluster with one: its address (where the app
   * clusters' nodes reach its NodePorts) and the images it holds (a local node pulls nothing).
   */
  controlPlaneNode?: { address?: string; images: Readonly<Record<string, string>> };
}

/** One app cluster that uses the implementation. */
export interface NetworkUser<C> {
  app: AppClusterConfig;
  connector: C;
  /** Its index in klutch:appClusters, for messages. */
  index: number;
  access: ClusterAccess;
}

/**
 * What the environment stack builds for the app clusters that use an implementation (the
 * parts known from config alone: peerings, routes, tunnels, addresses), by a key of the
 * builder's choosing (usually the app cluster's name).
 */
export type EnvironmentBuilder<C> = (
  ctx: EnvironmentNetworkContext,
  users: NetworkUser<C>[],
) => Record<string, pulumi.Resource>;

/**
 * An implementation's environment side: what it builds, and the bridge settings that are known
 * only once built (WireGuard's tunnel addresses), by app cluster name.
 */
export interface EnvironmentPart<C> {
  build(ctx: EnvironmentNetworkContext, users: NetworkUser<C>[]): Record<string, pulumi.Resource>;
  bridgeSettings?(built: Record<string, pulumi.Resource>): pulumi.Output<Record<string, unknown>>;
}
