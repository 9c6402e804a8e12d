import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import type { PathEndpoint, NetworkPathObject, PathProblem } from "../../lib/bridge/model";
import { forwarderProblems, realisedOnly } from "./model/forwarder-problems";
import { pathId } from "../../lib/bridge/model";
import type { BridgeTarget as Target } from "../contract/bridge-target";
import { clusterWireguardProgram } from "./cluster-program";
import { planWireguardGroup } from "./model/group-plan";
import { WireguardKeyPair } from "./key-provider";
import {
  LOCAL_DATA_NETNS_ENV,
  LOCAL_FORWARDER_ADDRESS,
  localClientSettings,
  localGatewayNames,
  localGroupPlan,
  localNames,
} from "./model/local-plan";
import { LocalTcpForwarder, LocalWireguardAllowedHosts, LocalWireguardClient } from "./local/resources";
import { NFT_TABLE } from "./model/render-nftables";
import type { WireguardSettings } from "./model/settings";
import type { HostAddress } from "./model/host-addresses";

/**
 * The bridge's Pulumi program for one WireGuard group (a consumer namespace, i.e. one app
 * cluster's client): the client's forwarder per connection and the gateway's allowed hosts
 * and filter follow the group's live paths; each path's hostForConsumer:port is its
 * forwarder, where the app side dials.
 *
 * Target `local` (no pods): the client is a network namespace with wireguard-go, the
 * gateway wireguard-go in the data-service namespace named by KLUTCH_WIREGUARD_NETNS (the
 * network the instances live in), the forwarders socat processes on the client namespace's
 * loopback. The client's key pair comes from the key provider and stays in this stack's
 * state (secret); a connection coming or going changes AllowedIPs, routes, flows and
 * forwarders in place, never the keys.
 *
 * Target `kubernetes`: the tunnel's pods are the environment stack's (WireguardTunnel with
 * bridgeConnections); the bridge publishes the group's flows and forwarder list for them
 * (cluster-program.ts), with no credentials for any app cluster.
 */
export function wireguardProgram(
  group: string,
  paths: NetworkPathObject[],
  target: Target,
  /** How instance host names resolve on clusters (the system's resolver unless a test gives one). */
  resolve?: (name: string) => Promise<HostAddress>,
): () => Promise<Record<string, unknown>> {
  if (target.kind !== "local")
    return clusterWireguardProgram(
      group,
      paths,
      target.kubeconfig,
      target.settings as WireguardSettings | undefined,
      resolve,
    );
  return () => {
    const names = localNames(group);
    const dataNetns = process.env[LOCAL_DATA_NETNS_ENV] ?? "";
    const problems: Record<string, PathProblem> = {};
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(dataNetns)) {
      // Without the data-service network there is nothing to tunnel into: say so per path.
      for (const p of paths)
        problems[pathId(p)] = {
          reason: "InvalidConnection",
          message: `the local WireGuard path needs the data-service network namespace: start the bridge with ${LOCAL_DATA_NETNS_ENV}=<netns>`,
        };
      return Promise.resolve({ endpoints: pulumi.output({}), problems });
    }
    // The same group plan the network preview predicts from (group-plan.ts).
    const groupPlan = planWireguardGroup(group, paths, { kind: "local" });
    const { admitted, previousPorts } = groupPlan;
    for (const [id, message] of Object.entries(groupPlan.rejected))
      problems[id] = { reason: "InvalidConnection", message };

    const gateway = localGatewayNames(target.stateDir, dataNetns);
    const planned = groupPlan.plan;
    if (!planned) throw new Error(`internal: no local WireGuard plan for ${group}`);
    const key = new WireguardKeyPair("client-key", { rotation: "initial" });
    const client = new LocalWireguardClient(
      "client",
      localClientSettings({ group, gateway, dataNetns, gatewayAddress: planned.gatewayAddress, key }),
    );
    // The flows name the client's tunnel address, known once the client holds one.
    const live = client.tunnelAddress.apply((address) =>
      localGroupPlan(names.appCluster, admitted, address, previousPorts),
    );
    const hosts = new LocalWireguardAllowedHosts(
      "allowed-hosts",
      {
        dataNetns,
        gatewayIfname: gateway.ifname,
        nftTable: NFT_TABLE,
        netns: client.netns,
        ifname: client.ifname,
        gatewayPublicKey: client.gatewayPublicKey,
        allowedIps: live.allowedIps,
        flows: live.flows,
        services: live.services,
      },
      { dependsOn: [client] },
    );
    const endpoints: Record<string, pulumi.Output<PathEndpoint | undefined>> = {};
    const failures: Record<string, pulumi.Output<string | undefined>> = {};
    for (const f of planned.forwarders) {
      const fwd = new LocalTcpForwarder(
        `forwarder-${f.name}`,
        {
          name: f.name,
          dir: path.join(gateway.dir, "forwarders"),
          netns: client.netns,
          listenAddress: LOCAL_FORWARDER_ADDRESS,
          listenPort: f.listenPort,
          host: f.host,
          port: f.port,
        },
        { dependsOn: [hosts] },
      );
      // A forwarder that does not listen is this path's problem alone (its state says why).
      failures[f.name] = fwd.failure;
      endpoints[f.name] = fwd.failure.apply((failure) =>
        failure === undefined ? { hostForConsumer: LOCAL_FORWARDER_ADDRESS, port: f.listenPort } : undefined,
      );
    }
    return Promise.resolve({
      endpoints: pulumi.output(endpoints).apply(realisedOnly),
      problems: pulumi.output(failures).apply((all) => ({ ...problems, ...forwarderProblems(all) })),
      tunnel: { netns: client.netns, tunnelAddress: client.tunnelAddress, publicKey: key.publicKey },
    });
  };
}
