import type { Drift, DriftKind, WatchedObject } from "./drift";

/**
 * Drift in an object groups share rather than make: the WireGuard gateway's flows ConfigMap,
 * which the environment stack makes empty and into which each group's stack applies its own
 * keys with a field manager of its own (network/wireguard/cluster-program.ts,
 * lib/bridge/grouping.ts groupFieldManager). Pure.
 *
 * Told by the API server's field ownership rather than by the keys' values: a group's run
 * writes only under its own manager, so a key the manager owned before an event and does not
 * own after it was changed or removed by someone else. The rules, from the Kubernetes docs
 * (reference/using-api/server-side-apply, "Conflicts" and "Field management"): an update that
 * changes a field's value takes the field from the managers that owned it, and a field that is
 * removed leaves every manager's set; an apply that sets the same value shares the field, which
 * changes nothing anyone uses, so it is no drift.
 */

/** The `data` and `binaryData` keys `manager` owns in the object, from its managedFields. */
export function keysOwnedBy(o: WatchedObject | undefined, manager: string): Set<string> {
  const keys = new Set<string>();
  for (const entry of o?.metadata?.managedFields ?? []) {
    if (entry.manager !== manager || entry.fieldsType !== "FieldsV1") continue;
    const fields = isObject(entry.fieldsV1) ? entry.fieldsV1 : {};
    for (const section of ["f:data", "f:binaryData"]) {
      const owned = fields[section];
      if (!isObject(owned)) continue;
      // FieldsV1 names a map's key `f:<key>`; "." is the map itself.
      for (const k of Object.keys(owned)) if (k.startsWith("f:")) keys.add(k.slice(2));
    }
  }
  return keys;
}

/**
 * The drift an event on a shared object is for the group applying with `manager`: the keys it
 * owned before and no longer owns (an update), or every key it owned (the object deleted);
 * undefined when none of its keys was touched.
 */
export function patchDriftOf(
  kind: DriftKind,
  event: "update" | "delete",
  before: WatchedObject | undefined,
  after: WatchedObject,
  manager: string,
): Drift | undefined {
  const name = after.metadata?.name ?? "";
  if (event === "delete") {
    const keys = [...keysOwnedBy(before ?? after, manager)].sort();
    return keys.length > 0 ? { kind, name, change: "deleted", keys } : undefined;
  }
  const still = keysOwnedBy(after, manager);
  const lost = [...keysOwnedBy(before, manager)].filter((k) => !still.has(k)).sort();
  return lost.length > 0 ? { kind, name, change: "changed", keys: lost } : undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
