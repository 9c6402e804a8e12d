import { formatPath } from "../../../lib/config/messages";
import { cidrProblem, cidrSize, cidrsOverlap } from "../../../lib/net/cidr";
import type { ConnectorCheckInput } from "../../contract/implementation";
import type { WireguardConnectorConfig } from "./config";
import { gatewayExposureOf } from "./exposure";

/**
 * WireGuard's rules across settings: app clusters share one gateway, so one tunnel CIDR,
 * apart from every cluster and data-service network, with an address for the gateway and
 * for each app cluster that uses it.
 */
export function checkWireguard({
  users,
  appClusters,
  controlPlane,
  add,
}: ConnectorCheckInput<WireguardConnectorConfig>): void {
  const first = users[0];
  if (!first) return;
  const tunnel = first.connector.tunnelCidr;
  const networks: { cidr: string; owner: string }[] = [];
  for (const c of [...(controlPlane ? [controlPlane] : []), ...appClusters]) {
    const n = c.value.network;
    if (!n) continue;
    for (const field of ["nodeCidr", "podCidr", "serviceCidr"] as const) {
      const cidr = n[field];
      if (cidr) networks.push({ cidr, owner: formatPath([...c.at, "network", field]) });
    }
  }
  if (controlPlane?.value.dataServiceCidr) {
    networks.push({
      cidr: controlPlane.value.dataServiceCidr,
      owner: formatPath([...controlPlane.at, "dataServiceCidr"]),
    });
  }
  for (const a of users) {
    const at = [...a.at, "networkConnector", "tunnelCidr"];
    const mine = a.connector.tunnelCidr;
    if (mine !== tunnel) {
      add(
        at,
        `${mine} differs from ${tunnel} (${formatPath([...first.at, "networkConnector", "tunnelCidr"])}); app clusters share one WireGuard gateway, so use one tunnel CIDR`,
      );
      continue;
    }
    if (cidrProblem(mine)) continue;
    for (const n of networks) {
      if (cidrsOverlap(mine, n.cidr))
        add(at, `${mine} overlaps ${n.owner} (${n.cidr}); choose a tunnel CIDR no cluster uses`);
    }
  }
  checkGatewayExposure(users, controlPlane, add);
  if (cidrProblem(tunnel)) return;
  // The network and broadcast addresses are not host addresses; the gateway takes one more.
  const hosts = cidrSize(tunnel) - 2n;
  const needed = BigInt(users.length) + 1n;
  if (hosts < needed) {
    add(
      [...first.at, "networkConnector", "tunnelCidr"],
      `${tunnel} has ${hosts < 0n ? 0n : hosts} host address(es), but the gateway and ${users.length} app cluster(s) need ${needed}; choose a larger tunnel CIDR such as a /24`,
    );
  }
}

/**
 * Who may reach the shared gateway: each app cluster's sources must be known, and the app
 * clusters agree on whether the gateway is public, since one load balancer serves them all.
 */
function checkGatewayExposure(
  users: ConnectorCheckInput<WireguardConnectorConfig>["users"],
  controlPlane: ConnectorCheckInput<WireguardConnectorConfig>["controlPlane"],
  add: ConnectorCheckInput<WireguardConnectorConfig>["add"],
): void {
  const first = users[0];
  if (!first) return;
  const vm = controlPlane?.value.infrastructure === "openstack";
  for (const a of users) {
    const at = [...a.at, "networkConnector"];
    if (a.connector.publicEndpoint !== first.connector.publicEndpoint) {
      add(
        [...at, "publicEndpoint"],
        `${a.connector.publicEndpoint} differs from ${first.connector.publicEndpoint} (${formatPath([...first.at, "networkConnector", "publicEndpoint"])}); app clusters share one WireGuard gateway, so one load balancer, public or not`,
      );
      continue;
    }
    if (vm && a.connector.publicEndpoint) {
      add(
        [...at, "publicEndpoint"],
        "true, but on OpenStack the gateway is a VM whose security group admits the clients' addresses only; list them in networkConnector.allowedSources (or network.egressCidrs) instead",
      );
      continue;
    }
    const exposure = gatewayExposureOf(a.value, a.connector);
    if (!exposure.ok) add(at, exposure.problem);
  }
}
