import type { PathProblem } from "../../../lib/bridge/api";
import { connectionProblems } from "./haproxy-config";
import { sniServerName, type ProxyConnection } from "./types";

/**
 * Splits a group's connections into those the proxy can serve and those it cannot (an
 * instanceHost that is no host name, a bad port, a TLS server name another connection
 * already uses), so one bad connection never fails the whole group's proxy. A host name
 * that does not resolve is admitted: HAProxy starts that server without an address (see
 * renderHaproxyConfig) and only that connection is down.
 */
export function admitConnections(connections: readonly ProxyConnection[]): {
  admitted: ProxyConnection[];
  rejected: Record<string, PathProblem>;
} {
  const admitted: ProxyConnection[] = [];
  const rejected: Record<string, PathProblem> = {};
  const serverNames = new Map<string, string>();
  for (const c of connections) {
    const own = connectionProblems([c]).map((m) => m.replace(/^connections\[0\]\.?/, "spec."));
    const sni = sniServerName(c);
    const holder = sni === undefined ? undefined : serverNames.get(sni);
    if (holder !== undefined)
      own.push(
        `spec.enhancements: tlsSNI serverName "${sni}" is already used by ${holder}; names must be unique`,
      );
    if (own.length > 0) {
      rejected[c.id] = { reason: "InvalidConnection", message: own.join("; ") };
      continue;
    }
    if (sni !== undefined) serverNames.set(sni, c.id);
    admitted.push(c);
  }
  return { admitted, rejected };
}
