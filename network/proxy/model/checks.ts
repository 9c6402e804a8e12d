import { formatPath } from "../../../lib/config/messages";
import type { ConnectorCheckInput } from "../../contract/implementation";
import type { ProxyConnectorConfig } from "./config";
import { proxyExposure } from "./exposure";

/** The proxy's rules across settings. */
export function checkProxy({ users, add }: ConnectorCheckInput<ProxyConnectorConfig>): void {
  for (const app of users) {
    const exposure = proxyExposure(app.value, app.connector);
    if (!exposure.ok) add([...app.at, "networkConnector"], exposure.problem);
  }
  checkNodePortRanges(users, add);
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
