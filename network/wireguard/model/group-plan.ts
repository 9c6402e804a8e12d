import type { NetworkPathObject } from "../../../lib/bridge/model";
import { pathId } from "../../../lib/bridge/model";
import type { WireguardSettings } from "./settings";
import { hostNames, plannedAddress, type HostAddresses } from "./host-addresses";
import {
  LOCAL_FORWARDER_ADDRESS,
  admitWireguard,
  localConnection,
  localGroupPlan,
  localNames,
  type LocalGroupPlan,
} from "./local-plan";
import type { WireguardConnection } from "./types";

/**
 * One WireGuard group (a consumer namespace) as the bridge plans it on either target, pure:
 * which connections the tunnel serves, and each one's forwarder. The bridge's programs
 * (bridge-program.ts locally, cluster-program.ts on clusters) build from it and the network
 * preview predicts endpoints from it, so both always agree.
 */
export type GroupWhere =
  | { kind: "local" }
  | {
      kind: "kubernetes";
      settings?: WireguardSettings;
      /**
       * The instance host names as the bridge resolved them where the gateway runs
       * (host-addresses.ts). Absent for a prediction (the network preview): names are then
       * planned with stand-in addresses, and their endpoints are predicted all the same.
       */
      hosts?: HostAddresses;
    };

export interface WireguardGroupPlan {
  /** The connections the tunnel serves (the local program plans them again once its address is known). */
  admitted: WireguardConnection[];
  /** The ports the paths report now, kept (a new connection never moves an existing one). */
  previousPorts: Record<string, number>;
  /** Why each path the tunnel cannot serve is refused (on that path alone). */
  rejected: Record<string, string>;
  /** The paths refused because their instance host name did not resolve (may come right by itself). */
  unresolved: string[];
  /** Set when the group as a whole cannot be served (every path gets it). */
  refusal?: string;
  /** The group's plan: forwarders, allowed hosts, gateway flows. */
  plan?: LocalGroupPlan;
  /** Where consumers dial each served path. */
  endpoints: Record<string, { hostForConsumer: string; port: number }>;
}

/** The plan's name for a cluster group's one client (any DNS label but "gateway"). */
const CLUSTER_CLIENT = "client";

export function planWireguardGroup(
  group: string,
  paths: NetworkPathObject[],
  where: GroupWhere,
): WireguardGroupPlan {
  // Ports the paths report now: kept, so a new connection never moves an existing one.
  const previousPorts: Record<string, number> = {};
  for (const p of paths) if (typeof p.status?.port === "number") previousPorts[pathId(p)] = p.status.port;
  if (where.kind === "local") {
    const appCluster = localNames(group).appCluster;
    const { admitted, rejected } = admitWireguard(
      appCluster,
      paths.map((p) => localConnection(pathId(p), appCluster, p.spec.instanceHost, p.spec.port)),
    );
    const plan = localGroupPlan(appCluster, admitted, undefined, previousPorts);
    return {
      admitted,
      previousPorts,
      rejected,
      unresolved: [],
      plan,
      endpoints: endpointsOf(plan, LOCAL_FORWARDER_ADDRESS),
    };
  }
  const settings = where.settings;
  if (!settings)
    return {
      admitted: [],
      previousPorts,
      rejected: {},
      unresolved: [],
      refusal: `the environment's bridge settings name no WireGuard tunnel for ${group}: run \`pulumi up\` of the environment stack (its WireguardTunnel publishes them)`,
      endpoints: {},
    };
  // Names are planned by the address they resolved to; one that did not is refused alone.
  const names = hostNames(paths.map((p) => p.spec.instanceHost));
  const unresolved: string[] = [];
  const unresolvedProblems: Record<string, string> = {};
  const addressed: WireguardConnection[] = [];
  for (const p of paths) {
    const found = plannedAddress(p.spec.instanceHost, where.hosts, names);
    if ("problem" in found) {
      unresolved.push(pathId(p));
      unresolvedProblems[pathId(p)] = found.problem;
    } else addressed.push(localConnection(pathId(p), CLUSTER_CLIENT, found.address, p.spec.port));
  }
  const admission = admitWireguard(CLUSTER_CLIENT, addressed, settings.tunnelCidr);
  const admitted = admission.admitted;
  const rejected = { ...admission.rejected, ...unresolvedProblems };
  const plan = localGroupPlan(
    CLUSTER_CLIENT,
    admitted,
    settings.clientAddress,
    previousPorts,
    settings.tunnelCidr,
  );
  if (plan.clientAddress !== settings.clientAddress)
    return {
      admitted,
      previousPorts,
      rejected,
      unresolved,
      refusal: `the environment's bridge settings give ${group}'s client the tunnel address ${settings.clientAddress}, which is not a client address of ${settings.tunnelCidr}: run \`pulumi up\` of the environment stack`,
      endpoints: {},
    };
  return {
    admitted,
    previousPorts,
    rejected,
    unresolved,
    plan,
    endpoints: endpointsOf(plan, settings.clientHost),
  };
}

function endpointsOf(plan: LocalGroupPlan, host: string): WireguardGroupPlan["endpoints"] {
  return Object.fromEntries(
    plan.forwarders.map((f) => [f.name, { hostForConsumer: host, port: f.listenPort }]),
  );
}
