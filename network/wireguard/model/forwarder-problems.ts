import type { PathEndpoint, PathProblem } from "../../../lib/bridge/model";

/**
 * How the local WireGuard group reports its forwarders (pure, beside its test): a path whose
 * forwarder does not listen gets Ready=False with the forwarder's own reason and fix, and
 * no endpoint; every other path of the group keeps its endpoint.
 */

/** The endpoints of the forwarders that listen. */
export function realisedOnly(
  endpoints: Record<string, PathEndpoint | undefined>,
): Record<string, PathEndpoint> {
  const out: Record<string, PathEndpoint> = {};
  for (const [id, e] of Object.entries(endpoints)) if (e) out[id] = e;
  return out;
}

/** A ForwarderFailed problem per forwarder with a failure. */
export function forwarderProblems(failures: Record<string, string | undefined>): Record<string, PathProblem> {
  const out: Record<string, PathProblem> = {};
  for (const [id, failure] of Object.entries(failures))
    if (failure !== undefined) out[id] = { reason: "ForwarderFailed", message: failure };
  return out;
}
