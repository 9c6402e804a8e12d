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
    checkGatewayService(a, first, controlPlane, add);
  }
}

/**
 * The gateway's Service must give the clients an address to dial: a load balancer's, a given
 * `endpoint`, or on a local control plane its node's (a NodePort; a local cluster has no
 * load-balancer controller). The app clusters share one gateway, so one Service type.
 */
function checkGatewayService(
  a: ConnectorCheckInput<WireguardConnectorConfig>["users"][number],
  first: ConnectorCheckInput<WireguardConnectorConfig>["users"][number],
  controlPlane: ConnectorCheckInput<WireguardConnectorConfig>["controlPlane"],
  add: ConnectorCheckInput<WireguardConnectorConfig>["add"],
): void {
  const at = [...a.at, "networkConnector", "serviceType"];
  const type = a.connector.serviceType;
  if (type !== first.connector.serviceType) {
    add(
      at,
      `${type} differs from ${first.connector.serviceType} (${formatPath([...first.at, "networkConnector", "serviceType"])}); app clusters share one WireGuard gateway, so one Service type`,
    );
    return;
  }
  if (controlPlane?.value.infrastructure === "openstack") return; // a gateway VM, no Service
  const local = controlPlane?.value.infrastructure === "local";
  // Without a node nothing of the tunnel runs (its objects are applied only): nothing to dial.
  const node = local && (controlPlane.value.nodes ?? 0) > 0;
  if (node && type === "LoadBalancer" && !a.connector.endpoint)
    add(
      at,
      `"LoadBalancer" (the default when unset) never gets an address on the local control plane "${controlPlane.value.name}", which has no load-balancer controller, so the WireGuard clients would have no gateway to dial: set networkConnector.serviceType to NodePort (its node's address and port are then the endpoint)`,
    );
  if (type === "NodePort" && !a.connector.endpoint && !node)
    add(
      at,
      `NodePort needs networkConnector.endpoint (a node's address and the gateway's port, host:port) unless the control plane is a local cluster with a node, whose address is known: set networkConnector.endpoint, or serviceType LoadBalancer`,
    );
}
