/**
 * What a teardown must release while Crossplane, its providers and the bridge still run: every
 * claim and composite resource of the control plane's XRDs, and what they composed.
 *
 * Why (Crossplane 1.20.11, read in its source): deleting an XRD deletes its XRs and claims
 * only while Crossplane still has its rights on them, and those rights (the RBAC manager's
 * `crossplane:composite:<xrd>:aggregate-to-crossplane`) are owned by the XRD itself; composed
 * resources go after their XR by garbage collection and carry their controllers' finalizers
 * (a NetworkPath the bridge's, an Object provider-kubernetes'). Removing the controllers or the
 * CRDs first leaves those finalizers with nobody to remove them, and the CRD deletes hang.
 * So a teardown deletes the claims first and waits until the composed objects are gone.
 */

/** A kind to drain: a composite (cluster-scoped) and, where offered, its claim (namespaced). */
export interface DrainKind {
  group: string;
  /** The served version used to list them (the referenceable one where marked). */
  version: string;
  compositePlural: string;
  compositeKind: string;
  claimPlural?: string;
  claimKind?: string;
  /**
   * 0: claims that refer to another claim (`spec.instanceRef`: upstream's ServiceBinding,
   * Backup and Restore) go first, so the instance they act on is still there when their
   * backend releases them; 1: everything else.
   */
  stage: 0 | 1;
}

interface XrdVersion {
  name?: string;
  served?: boolean;
  referenceable?: boolean;
  schema?: { openAPIV3Schema?: { properties?: { spec?: { properties?: Record<string, unknown> } } } };
}

interface XrdObject {
  metadata?: { name?: string };
  spec?: {
    group?: string;
    names?: { plural?: string; kind?: string };
    claimNames?: { plural?: string; kind?: string };
    versions?: XrdVersion[];
  };
}

/** The kinds to drain, read from the XRDs on the control plane (apiextensions.crossplane.io/v1). */
export function drainKinds(xrds: readonly unknown[]): DrainKind[] {
  const kinds: DrainKind[] = [];
  for (const raw of xrds) {
    const spec = (raw as XrdObject).spec;
    const versions = (spec?.versions ?? []).filter((v) => v.served !== false && v.name);
    const version = versions.find((v) => v.referenceable) ?? versions[0];
    if (!spec?.group || !spec.names?.plural || !spec.names.kind || !version?.name) continue;
    const specProps = version.schema?.openAPIV3Schema?.properties?.spec?.properties ?? {};
    kinds.push({
      group: spec.group,
      version: version.name,
      compositePlural: spec.names.plural,
      compositeKind: spec.names.kind,
      ...(spec.claimNames?.plural && spec.claimNames.kind
        ? { claimPlural: spec.claimNames.plural, claimKind: spec.claimNames.kind }
        : {}),
      stage: "instanceRef" in specProps ? 0 : 1,
    });
  }
  return kinds.sort((a, b) => a.stage - b.stage || a.compositePlural.localeCompare(b.compositePlural));
}

/** An object still there, as a reference a person can look up with kubectl. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
}

/**
 * What an XR composed (`spec.resourceRefs` of a Crossplane v1 composite), so the teardown can
 * wait for those too: they are deleted by garbage collection after their XR, not with it.
 */
export function composedRefs(composite: unknown): ObjectRef[] {
  const refs = (composite as { spec?: { resourceRefs?: Partial<ObjectRef>[] } }).spec?.resourceRefs ?? [];
  return refs.flatMap((r) =>
    r.apiVersion && r.kind && r.name
      ? [
          {
            apiVersion: r.apiVersion,
            kind: r.kind,
            name: r.name,
            ...(r.namespace ? { namespace: r.namespace } : {}),
          },
        ]
      : [],
  );
}

export const refKey = (r: ObjectRef) =>
  `${r.apiVersion}/${r.kind}/${r.namespace ? `${r.namespace}/` : ""}${r.name}`;

/** What is left at one look: claims, composites and composed objects still present. */
export interface DrainSnapshot {
  claims: ObjectRef[];
  composites: ObjectRef[];
  composed: ObjectRef[];
}

export const drained = (s: DrainSnapshot) => s.claims.length + s.composites.length + s.composed.length === 0;

/** "2 claims (TCPConnection cluster-app-1/a, …), 1 composite (…)": one progress or error line. */
export function describeSnapshot(s: DrainSnapshot, perGroup = 5): string {
  const group = (label: string, refs: ObjectRef[]) => {
    if (refs.length === 0) return [];
    const shown = refs
      .slice(0, perGroup)
      .map((r) => `${r.kind} ${r.namespace ? `${r.namespace}/` : ""}${r.name}`);
    const more = refs.length > perGroup ? `, and ${refs.length - perGroup} more` : "";
    return [`${refs.length} ${label}${refs.length === 1 ? "" : "s"} (${shown.join(", ")}${more})`];
  };
  const parts = [
    ...group("claim", s.claims),
    ...group("composite", s.composites),
    ...group("composed object", s.composed),
  ];
  return parts.length === 0 ? "nothing left" : parts.join(", ");
}

/** The error a drain that ran out of time ends with: what is left and where to look. */
export function drainTimeoutMessage(s: DrainSnapshot, seconds: number): string {
  return [
    `the teardown stopped before removing Crossplane and the bridge: after ${seconds}s these are still there: ${describeSnapshot(s, 10)}.`,
    "Their controllers still run. Look at why they do not go (kubectl describe on them: conditions, events, finalizers;",
    "a NetworkPath's status names the bridge's error), fix it, and run the destroy again: it resumes here.",
  ].join(" ");
}
