import { formatPath } from "../../../lib/config/messages";
import { knownNodePortRange, rangeWithin } from "../../../lib/config/cluster-limits";
import type { ConnectorCheckInput } from "../../contract/implementation";
import type { ProxyConnectorConfig } from "./config";
import { proxyExposure } from "./exposure";

/** The proxy's rules across settings. */
export function checkProxy({ users, controlPlane, add }: ConnectorCheckInput<ProxyConnectorConfig>): void {
  for (const app of users) {
    const exposure = proxyExposure(app.value, app.connector);
    if (!exposure.ok) add([...app.at, "networkConnector"], exposure.problem);
  }
  checkNodePortRanges(users, add);
  checkNodePortsAccepted(users, controlPlane, add);
  checkKernelHop(users, controlPlane, add);
}

/**
 * The kernel hop has no pods of its own: no NetworkPolicy to admit allowedSources by, and no
 * HAProxy to pin to CPUs. kube-proxy filters a LoadBalancer's sources
 * (`loadBalancerSourceRanges`) but not a NodePort's, so a NodePort kernel path would admit
 * whoever reaches a node: allowed only when that is what publicEndpoint says.
 */
function checkKernelHop(
  users: ConnectorCheckInput<ProxyConnectorConfig>["users"],
  controlPlane: ConnectorCheckInput<ProxyConnectorConfig>["controlPlane"],
  add: ConnectorCheckInput<ProxyConnectorConfig>["add"],
): void {
  const cp = controlPlane?.value;
  // A local control plane without a node runs no kube-proxy (and its bridge builds HAProxy
  // processes on this machine, where a kernel path cannot be had).
  const noKubeProxy = cp !== undefined && cp.infrastructure === "local" && (cp.nodes ?? 0) === 0;
  for (const a of users) {
    const c = a.connector;
    if (c.hop !== "kernel") continue;
    if (noKubeProxy) {
      add(
        [...a.at, "networkConnector", "hop"],
        `"kernel" forwards through kube-proxy on the data-service cluster's nodes, and the local control plane ${cp.name} has none (nodes: 0); set its nodes: 1, or hop: haproxy`,
      );
    }
    if (c.dedicatedCpus !== undefined) {
      add(
        [...a.at, "networkConnector", "dedicatedCpus"],
        `${c.dedicatedCpus} CPUs are for HAProxy pods, and hop "kernel" runs none (kube-proxy forwards in the node's kernel); remove dedicatedCpus, or set hop: haproxy`,
      );
    }
    if (c.serviceType === "NodePort" && !c.publicEndpoint) {
      add(
        [...a.at, "networkConnector", "hop"],
        `"kernel" with serviceType NodePort would admit every address that reaches a node: kube-proxy applies no source ranges to node ports, and the kernel hop has no pods for a NetworkPolicy; use serviceType LoadBalancer (its loadBalancerSourceRanges are enforced) or ClusterIP, or hop: haproxy, or publicEndpoint: true if the path is meant to be open`,
      );
    }
  }
}

/**
 * A NodePort proxy's Service takes its ports from portRange as explicit node ports
 * (network/proxy/tcp-proxy.ts), on the data-service cluster, which is the control plane
 * (components/bridge/bridge-data-plane.ts). Its API server refuses any outside its
 * --service-node-port-range: say so now, where that range is known (elsewhere its API server is
 * asked on `up`: node-port-probe.ts).
 */
function checkNodePortsAccepted(
  users: ConnectorCheckInput<ProxyConnectorConfig>["users"],
  controlPlane: ConnectorCheckInput<ProxyConnectorConfig>["controlPlane"],
  add: ConnectorCheckInput<ProxyConnectorConfig>["add"],
): void {
  const known = controlPlane ? knownNodePortRange(controlPlane.value) : undefined;
  if (!controlPlane || !known) return;
  const { from, to } = known.range;
  for (const a of users) {
    const c = a.connector;
    if (c.serviceType !== "NodePort" || rangeWithin(c.portRange, known.range)) continue;
    add(
      [...a.at, "networkConnector", "portRange"],
      `${c.portRange.from}-${c.portRange.to} is outside the node ports of the data-service cluster ${controlPlane.value.name} (${from}-${to}: ${known.why}); its API server would refuse the proxy's Service ("provided port is not in the valid range"); choose a range within ${from}-${to}`,
    );
  }
}

/**
 * Every app cluster's proxy runs in the one data-service cluster, where node ports are
 * cluster-wide: two NodePort proxies with overlapping port ranges would fight over ports.
 */
function checkNodePortRanges(
  users: ConnectorCheckInput<ProxyConnectorConfig>["users"],
  add: ConnectorCheckInput<ProxyConnectorConfig>["add"],
): void {
  const seen: { range: { from: number; to: number }; at: (string | number)[] }[] = [];
  for (const a of users) {
    const c = a.connector;
    if (c.serviceType !== "NodePort") continue;
    const at = [...a.at, "networkConnector", "portRange"];
    const clash = seen.find((s) => s.range.from <= c.portRange.to && c.portRange.from <= s.range.to);
    if (clash) {
      add(
        at,
        `${c.portRange.from}-${c.portRange.to} overlaps ${formatPath(clash.at)} (${clash.range.from}-${clash.range.to}); NodePort proxies share the data-service cluster's node ports, so give each app cluster its own range`,
      );
    }
    seen.push({ range: c.portRange, at });
  }
}
