/**
 * Relaying a connection's readiness to the composite that waits for it. Pure.
 */
import { DATASERVICES_GROUP } from "../dataservices/xrds";
import { controllerOwner, isReady } from "../kube/owner-conditions";

/**
 * Composites that compose an XTCPConnection and wait for it: the network-aware ServiceBinding
 * (lib/dataservices/compositions.ts). Crossplane 1.20 without realtime compositions (off on
 * the local control plane, see lib/crossplane/crossplane-plan.ts) checks an unready XR again
 * only after a growing back-off (1, 2, 4, 8, 16 s …: "Requeue immediately (subject to
 * backoff)" in internal/controller/apiextensions/composite/reconciler.go at v1.20.11), so a
 * binding whose connection became Ready after 14 s was seen Ready 26 s later. The bridge
 * therefore relays a connection's readiness to such an owner, as it does to the connection.
 * Both ways: a Ready binding is looked at again only at the poll (30 s on the local stack), so
 * a binding whose connection went unusable stayed Ready for up to that long (3.5 to 33 s
 * measured when a WireGuard gateway was scaled to 0).
 */
export const RELAYED_OWNERS = [
  { group: DATASERVICES_GROUP, kind: "XServiceBinding", plural: "xservicebindings" },
] as const;

/**
 * The annotation the bridge sets on a connection's owner once the connection's Ready has
 * become what its path says (True or False), so the owner reconciles and follows it.
 */
export const CONNECTION_STATUS_ANNOTATION = "klutch.anynines.com/connection-status-at";

/**
 * The annotation to write on a connection composite's controller owner, when that owner is a
 * kind the bridge relays to (RELAYED_OWNERS); undefined otherwise.
 */
export function ownerNudge(
  composite: { metadata: Parameters<typeof controllerOwner>[0] },
  now: string,
):
  | { group: string; version: string; plural: string; name: string; annotations: Record<string, string> }
  | undefined {
  const owner = controllerOwner(composite.metadata);
  const relayed = RELAYED_OWNERS.find((r) => r.group === owner?.group && r.kind === owner.kind);
  if (!owner || !relayed) return undefined;
  return {
    group: owner.group,
    version: owner.version,
    plural: relayed.plural,
    name: owner.name,
    annotations: { [CONNECTION_STATUS_ANNOTATION]: now },
  };
}

/**
 * One look at a connection composite while relaying a path's readiness to its owner: the
 * owner's annotation once Crossplane has made the composite's Ready what the path says
 * (`wantReady`), `wait` until then, `none` when no owner waits for this composite.
 */
export function relayStep(
  composite: Parameters<typeof ownerNudge>[0] & Parameters<typeof isReady>[0],
  wantReady: boolean,
  now: string,
): NonNullable<ReturnType<typeof ownerNudge>> | "wait" | "none" {
  const owner = ownerNudge(composite, now);
  if (!owner) return "none";
  return isReady(composite) === wantReady ? owner : "wait";
}
