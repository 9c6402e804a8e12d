/**
 * Reading Kubernetes objects' common metadata and status: the controller owner's reference
 * and the Ready condition. Pure.
 */

export interface OwnerReferenceLike {
  apiVersion: string;
  kind: string;
  name: string;
  controller?: boolean;
}

/** An object's controller owner, its apiVersion split; undefined without one, or for a core-group owner. */
export function controllerOwner(metadata: {
  ownerReferences?: readonly OwnerReferenceLike[];
}): { group: string; version: string; kind: string; name: string } | undefined {
  const owner = metadata.ownerReferences?.find((o) => o.controller);
  if (!owner) return undefined;
  const slash = owner.apiVersion.indexOf("/");
  if (slash < 0) return undefined;
  return {
    group: owner.apiVersion.slice(0, slash),
    version: owner.apiVersion.slice(slash + 1),
    kind: owner.kind,
    name: owner.name,
  };
}

/** Whether an object's Ready condition is True. */
export function isReady(o: {
  status?: { conditions?: readonly { type: string; status: string }[] };
}): boolean {
  return o.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
}
