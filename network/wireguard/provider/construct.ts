import { DNS_LABEL, DNS_LABEL_RULE } from "../../../lib/net/dns";
import { type Exposure, exposureArgProblem } from "../../contract/exposure";
import { planWireguard } from "../model/planner";
import { GATEWAY, WireguardPlanError } from "../model/types";
import { type WireguardConnectionArgs, WireguardTunnel } from "../wireguard-tunnel";
import { UNKNOWN } from "../../../providers/kit/schema-model";
import {
  type Args,
  type Constructor,
  allKnown,
  clusterProvider,
  itemField,
  refuse,
} from "../../../providers/kit/construct";

/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument */
// Inputs arrive checked against programs/klutch-provider/catalog.ts (provider.ts); see providers/kit/construct.ts.

/** Stands in for an endpoint the plan cannot know before the gateway's Service has an address. */
const LATER_ENDPOINT = "gateway.invalid";

/**
 * What WireguardTunnel would refuse, checked before anything is registered, as one message:
 * the component refuses one problem at a time, and its planner runs only once every Output
 * has resolved.
 */
export function wireguardProblems(values: Args): string[] {
  const problems: string[] = [];
  if (!values.gatewayVm && values.gatewayKubeconfig === undefined)
    problems.push(
      "gatewayKubeconfig is required (the cluster in the data-service network, where the gateway runs); or set gatewayVm: true to get cloud-init user data for a gateway VM",
    );
  if (values.gatewayVm && values.bridgeConnections && values.gatewayVmFlows === undefined)
    problems.push("bridgeConnections with gatewayVm needs gatewayVmFlows (the flows ConfigMap the VM reads)");
  if (!values.gatewayVm && allKnown(values.gatewayExposure)) {
    const exposure = exposureArgProblem(
      "WireguardTunnel",
      "gatewayExposure",
      (values.gatewayServiceType as "ClusterIP" | "NodePort" | "LoadBalancer" | undefined) ?? "LoadBalancer",
      values.gatewayExposure as Exposure | undefined,
    );
    if (exposure) problems.push(exposure.replace(/^WireguardTunnel: /, ""));
  }
  const clusters = (values.appClusters ?? []) as unknown;
  if (!Array.isArray(clusters) || clusters.some((c) => c === UNKNOWN || (c as Args).name === UNKNOWN)) {
    problems.push(
      "appClusters[].name must be known before the component is created (the names decide what is created)",
    );
    return problems;
  }
  const names = (clusters as Args[]).map((c) => c.name as string);
  names.forEach((n, i) => {
    if (n === GATEWAY)
      problems.push(
        `appClusters[${i}].name "gateway" is reserved for the gateway's resources; rename the app cluster`,
      );
    else if (!DNS_LABEL.test(n)) problems.push(`appClusters[${i}].name "${n}" ${DNS_LABEL_RULE}`);
  });
  if (problems.length > 0) return problems;
  // The planner's own checks (tunnel CIDR, overlaps, names, hosts, ports, enhancements), once
  // what it reads is known; an endpoint still to come from the gateway's Service is left out.
  const planned = [
    values.tunnelCidr,
    values.listenPort,
    values.persistentKeepalive,
    values.previousAssignments,
    values.clusterCidrs,
    values.dataServiceCidrs,
  ];
  if (!allKnown(...planned)) return problems;
  const endpoint =
    values.endpoint === undefined || values.endpoint === UNKNOWN
      ? LATER_ENDPOINT
      : (values.endpoint as string);
  try {
    planWireguard({
      tunnelCidr: values.tunnelCidr ?? "100.96.0.0/24",
      listenPort: values.listenPort ?? 51820,
      endpoint,
      persistentKeepalive: values.persistentKeepalive,
      appClusters: names,
      connections: values.connections ?? [],
      clusterCidrs: values.clusterCidrs ?? [],
      dataServiceCidrs: values.dataServiceCidrs ?? [],
      previousAssignments: values.previousAssignments ?? {},
    });
  } catch (e) {
    if (!(e instanceof WireguardPlanError)) throw e;
    problems.push(...e.problems);
  }
  return problems;
}

export const wireguardConstructors: Record<string, Constructor> = {
  "klutch:network:WireguardTunnel": (name, args, opts, values) => {
    refuse("WireguardTunnel", name, wireguardProblems(values));
    const clusters = values.appClusters as Args[];
    const tunnel = new WireguardTunnel(
      name,
      {
        gatewayProvider:
          values.gatewayVm || args.gatewayKubeconfig === undefined
            ? undefined
            : clusterProvider(`${name}-gateway`, args.gatewayKubeconfig, opts),
        gatewayNamespace: args.gatewayNamespace,
        appClusters: clusters.map((c, i) => ({
          name: c.name as string,
          provider: clusterProvider(
            `${name}-${c.name}`,
            itemField<string>(args.appClusters, i, "kubeconfig"),
            opts,
          ),
          namespace: typeof c.namespace === "string" ? c.namespace : undefined,
        })),
        connections: (args.connections ?? []) as WireguardConnectionArgs[],
        tunnelCidr: args.tunnelCidr,
        listenPort: args.listenPort,
        endpoint: args.endpoint,
        persistentKeepalive: args.persistentKeepalive,
        rotation: args.rotation,
        previousAssignments: args.previousAssignments,
        clusterCidrs: args.clusterCidrs,
        dataServiceCidrs: args.dataServiceCidrs,
        skipAwait: args.skipAwait,
        gatewayVm: args.gatewayVm,
        gatewayServiceType: args.gatewayServiceType,
        gatewayExposure: args.gatewayExposure,
        image: args.image,
        forwarderImage: args.forwarderImage,
        clusterDomain: args.clusterDomain,
        bridgeConnections: args.bridgeConnections,
        gatewayVmFlows: args.gatewayVmFlows,
      },
      opts,
    );
    return {
      resource: tunnel,
      outputs: {
        endpoints: tunnel.endpoints,
        assignments: tunnel.assignments,
        gatewayPublicKey: tunnel.gatewayPublicKey,
        clientPublicKeys: tunnel.clientPublicKeys,
        ...(tunnel.gatewayUserData ? { gatewayUserData: tunnel.gatewayUserData } : {}),
        ...(tunnel.bridgeSettings ? { bridgeSettings: tunnel.bridgeSettings } : {}),
      },
    };
  },
};
