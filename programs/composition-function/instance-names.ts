/**
 * Instance names: where an instance's host lies in a zone the app clusters' instance-names
 * servers answer (input.instanceZones), the binding's Secret keeps that host and only its port
 * becomes the path's, so a client that checks the server's certificate against the host it
 * dials still can. The name must then resolve to the path inside the app cluster: the binding
 * says where, on the claim's status.managed.instanceNames, which the konnector copies to the app
 * cluster with the rest of the status; the instance-names server there answers from it
 * (programs/instance-names/, lib/instance-names/records.ts reads the same list).
 *
 * Pure: the function's Ready connections in, the names and the hosts to keep out.
 */
import type { JsonObject } from "./json.js";
import { isReadyTrue, stringAt } from "./step.js";

/** One name the app cluster's instance-names server answers, and the address it answers with. */
export interface InstanceName {
  name: string;
  address: string;
}

/** Whether a host is one of the zones or a name under one (case and a trailing dot ignored). */
export function inZones(host: string, zones: readonly string[]): boolean {
  const name = host.toLowerCase().replace(/\.$/, "");
  return zones.some((zone) => name === zone || name.endsWith(`.${zone}`));
}

/**
 * The names the Ready connections give, one per instance host in a zone. A host whose
 * connections reach the app cluster at different addresses cannot be one name: it is left out,
 * and its places in the Secret are rewritten to each path as for a host outside the zones.
 */
export function instanceNamesOf(
  connections: readonly (JsonObject | undefined)[],
  zones: readonly string[] | undefined,
): InstanceName[] {
  if (!zones || zones.length === 0) return [];
  const addresses = new Map<string, Set<string>>();
  for (const connection of connections) {
    const host = stringAt(connection, "spec", "instanceHost");
    const address = stringAt(connection, "status", "hostForConsumer");
    if (!host || !address || !isReadyTrue(connection) || !inZones(host, zones)) continue;
    const name = host.toLowerCase().replace(/\.$/, "");
    addresses.set(name, (addresses.get(name) ?? new Set()).add(address));
  }
  return [...addresses]
    .filter(([, found]) => found.size === 1)
    .map(([name, found]) => ({ name, address: [...found][0]! }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** The status patch that publishes the names; always written, so a name no longer given is gone. */
export function instanceNamesPatch(names: readonly InstanceName[]): JsonObject {
  return { status: { managed: { instanceNames: names.map((n) => ({ name: n.name, address: n.address })) } } };
}

/**
 * The names the connections give, and the step's patch publishing them: none where the
 * composition names no zones (the claim's status is then left as it was).
 */
export function instanceNames(
  connections: readonly (JsonObject | undefined)[],
  zones: readonly string[] | undefined,
): { names: InstanceName[]; patch: { compositePatch?: JsonObject } } {
  const names = instanceNamesOf(connections, zones);
  return { names, patch: zones && zones.length > 0 ? { compositePatch: instanceNamesPatch(names) } : {} };
}
