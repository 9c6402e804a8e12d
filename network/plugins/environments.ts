import * as pulumi from "@pulumi/pulumi";
import { awsVpcPeeringEnvironment } from "../aws-vpc-peering/environment";
import type {
  EnvironmentBuilder,
  EnvironmentNetworkContext,
  NetworkUser,
} from "../contract/environment-context";
import type { ConnectorOf } from "../contract/implementation";
import { openstackEnvironment } from "../openstack/environment";
import { proxyEnvironment } from "../proxy/environment";
import { wireguardEnvironment } from "../wireguard/environment";
import { WireguardTunnel, type WireguardBridgeSettings } from "../wireguard/wireguard-tunnel";
import { IMPLEMENTATIONS, type ImplementationName } from "../registry";

type Spec<K extends ImplementationName> = Extract<(typeof IMPLEMENTATIONS)[number], { name: K }>;

/**
 * What the environment stack builds per implementation: the registry's environment side.
 * Typed over every name in the registry, so an implementation cannot be added without
 * saying what the environment does for it (undefined: nothing).
 */
export const ENVIRONMENT_BUILDERS: {
  [K in ImplementationName]: EnvironmentBuilder<ConnectorOf<Spec<K>>> | undefined;
} = {
  proxy: proxyEnvironment,
  wireguard: wireguardEnvironment,
  awsVpcPeering: awsVpcPeeringEnvironment,
  openstack: openstackEnvironment,
  noop: undefined,
};

/** The network resources of the environment, by implementation, then by the builder's key. */
export type NetworkPaths = Partial<Record<ImplementationName, Record<string, pulumi.Resource>>>;

/** Runs every implementation's environment builder over the app clusters that use it. */
export function buildNetworkPaths(ctx: EnvironmentNetworkContext): NetworkPaths {
  const out: NetworkPaths = {};
  for (const impl of IMPLEMENTATIONS) {
    const users: NetworkUser<unknown>[] = [];
    ctx.config.appClusters.forEach((app, index) => {
      const access = ctx.appClusters[app.name];
      if (app.networkConnector.implementation !== impl.name || !access) return;
      users.push({ app, connector: app.networkConnector, index, access });
    });
    // The registry pairs each name with its schema, so these users' connectors have the
    // builder's type; TypeScript cannot follow that through the loop.
    const build = ENVIRONMENT_BUILDERS[impl.name] as EnvironmentBuilder<unknown> | undefined;
    if (build && users.length > 0) out[impl.name] = build(ctx, users);
  }
  return out;
}

/**
 * What the bridge needs per wireguard app cluster (WireguardTunnel.bridgeSettings): the tunnel's
 * addresses and where to publish flows (a gateway pod's or VM's). Empty without a tunnel.
 */
export function wireguardBridgeSettings(
  paths: NetworkPaths,
): pulumi.Output<Record<string, WireguardBridgeSettings>> {
  const tunnel = paths.wireguard?.tunnel;
  if (tunnel instanceof WireguardTunnel && tunnel.bridgeSettings) return tunnel.bridgeSettings;
  return pulumi.output<Record<string, WireguardBridgeSettings>>({});
}
