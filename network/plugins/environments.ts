import * as pulumi from "@pulumi/pulumi";
import type {
  EnvironmentNetworkContext,
  EnvironmentPart,
  NetworkUser,
} from "../contract/environment-context";
import { IMPLEMENTATIONS, type ImplementationName } from "../registry";

/** The network resources of the environment, by implementation, then by the builder's key. */
export type NetworkPaths = Partial<Record<ImplementationName, Record<string, pulumi.Resource>>>;

/** What each implementation's environment side built, and the bridge settings it learnt doing so. */
export interface BuiltNetwork {
  paths: NetworkPaths;
  /** By implementation, then app cluster: settings known only once built (WireGuard's addresses). */
  plannedSettings: pulumi.Output<Record<string, Record<string, unknown>>>;
}

/**
 * Runs every registered implementation's environment side (its spec's `pulumi.environment`)
 * over the app clusters that use it.
 */
export function buildNetworkPaths(ctx: EnvironmentNetworkContext): BuiltNetwork {
  const paths: NetworkPaths = {};
  const planned: Record<string, pulumi.Output<Record<string, unknown>>> = {};
  for (const impl of IMPLEMENTATIONS) {
    const users: NetworkUser<unknown>[] = [];
    ctx.config.appClusters.forEach((app, index) => {
      const access = ctx.appClusters[app.name];
      if (app.networkConnector.implementation !== impl.name || !access) return;
      users.push({ app, connector: app.networkConnector, index, access });
    });
    if (users.length === 0) continue;
    const part: EnvironmentPart<unknown> | undefined = impl.pulumi.environment?.();
    if (!part) continue;
    const built = part.build(ctx, users);
    paths[impl.name] = built;
    if (part.bridgeSettings) planned[impl.name] = part.bridgeSettings(built);
  }
  return { paths, plannedSettings: pulumi.output(planned) };
}
