import type { NetworkPathObject } from "../../../lib/bridge/model";
import type { PathHealth } from "../../contract/implementation";
import { admitConnections } from "./admission";
import { toConnection } from "./target";
import { servicesNamed, withUnservedBut, type NamedServices } from "../../contract/instance-service";

export { unservedProblem, type ServiceRef } from "../../contract/instance-service";

/** The Services a group's admitted paths name, each with the ids and ports of its paths. */
export function instanceServices(live: readonly NetworkPathObject[], clusterDomain?: string): NamedServices {
  const admitted = admitConnections(live.map(toConnection)).admitted;
  return servicesNamed(
    admitted.map((c) => ({ id: c.id, host: c.instanceHost, port: c.port })),
    clusterDomain,
  );
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
