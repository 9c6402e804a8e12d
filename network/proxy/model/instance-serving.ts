import type { NetworkPathObject } from "../../../lib/bridge/model";
import type { PathHealth } from "../../contract/implementation";
import { admitConnections } from "./admission";
import { instanceTargetOf } from "./kernel-path";
import { toConnection } from "./target";
import { withUnservedBut, type ServiceRef } from "../../contract/instance-service";

export { unservedProblem, type ServiceRef } from "../../contract/instance-service";

/** The Services a group's admitted paths name, each with the ids and ports of its paths. */
export function instanceServices(
  live: readonly NetworkPathObject[],
  clusterDomain?: string,
): Map<string, { ref: ServiceRef; paths: { id: string; port: number }[] }> {
  const out = new Map<string, { ref: ServiceRef; paths: { id: string; port: number }[] }>();
  for (const c of admitConnections(live.map(toConnection)).admitted) {
    const target = instanceTargetOf(c.instanceHost, clusterDomain);
    if (target.kind !== "service") continue;
    const key = `${target.namespace}/${target.name}`;
    const entry = out.get(key) ?? { ref: { namespace: target.namespace, name: target.name }, paths: [] };
    entry.paths.push({ id: c.id, port: c.port });
    out.set(key, entry);
  }
  return out;
}

/**
 * HAProxy's verdicts with the endpoints' added: a path whose Service has no endpoint is not
 * Ready whatever HAProxy's last check said, and the endpoints' message, which names the cause,
 * replaces HAProxy's failing checks (whichever of the two a poll sees first, the path says the
 * same). Only ProxyUnavailable stands: the path's own pods are missing, which the bridge heals.
 * A path the endpoints say nothing of keeps HAProxy's verdict (or none). Back to Ready takes
 * both: HAProxy's checks pass once the instance serves again.
 */
export function withUnserved(
  haproxy: Record<string, PathHealth>,
  unserved: Record<string, string>,
): Record<string, PathHealth> {
  return withUnservedBut(haproxy, unserved, "ProxyUnavailable");
}
