import type { NetworkPathObject } from "../../lib/bridge/model";
import type { ImplementationName } from "../registry";
import { proxyProgram } from "../proxy/bridge-program";
import type { Target } from "../proxy/model/target";
import { routedProgram } from "../shared/routed-program";
import { wireguardProgram } from "../wireguard/bridge-program";

/** The bridge's Pulumi program for one group (a consumer namespace and implementation). */
export type GroupProgram = (
  group: string,
  paths: NetworkPathObject[],
  target: Target,
) => () => Promise<Record<string, unknown>>;

/**
 * What the bridge builds per connection, by implementation: the registry's bridge side.
 * Typed over every name in the registry, so an implementation cannot be added without
 * saying what the bridge does for it (undefined: nothing, for NOOP's markers). Kept apart
 * from environments.ts so the bridge never loads the cloud SDKs.
 */
export const BRIDGE_PROGRAMS: Record<ImplementationName, GroupProgram | undefined> = {
  proxy: proxyProgram,
  // A forwarder per connection on the app side, the gateway's allowed hosts and filter.
  wireguard: wireguardProgram,
  awsVpcPeering: (_group, paths) => routedProgram(paths),
  openstack: (_group, paths) => routedProgram(paths),
  noop: undefined,
};
