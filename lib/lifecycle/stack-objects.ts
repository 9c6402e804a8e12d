/**
 * The Kubernetes objects a stack's state says it has, by the cluster they live on: what
 * `up` and `preview` look at before they start, because neither notices an object that is
 * still there but being deleted. The provider's Diff compares inputs only, and Read reports a
 * terminating object as present (@pulumi/kubernetes v4.25.0 provider/pkg/provider/provider.go
 * Diff, Read), so an update over it says "same" and reports success.
 */

import { isSecretEnvelope } from "../pulumi-secret";
import type { ObjectRef } from "./drain-plan";

/** A resource as `pulumi stack export --show-secrets` writes it. */
export interface StateResource {
  urn: string;
  type: string;
  id?: string;
  custom?: boolean;
  provider?: string;
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
}

export interface ClusterObjects {
  /** The provider's reference in the state (`<urn>::<id>`). */
  provider: string;
  kubeconfig: string;
  objects: (ObjectRef & { urn: string })[];
}

const PROVIDER_TYPE = "pulumi:providers:kubernetes";
export { SECRET_MARKER, SECRET_SIG } from "../pulumi-secret";

/** A value of an exported state: plain, or a secret shown with `--show-secrets`. */
export function plainValue(v: unknown): unknown {
  if (isSecretEnvelope(v)) {
    const plaintext = v.plaintext;
    return plaintext === undefined ? undefined : (JSON.parse(plaintext) as unknown);
  }
  return v;
}

/**
 * The stack's Kubernetes objects grouped by the cluster (provider) they are on. Providers
 * whose kubeconfig is not readable here (still encrypted, or a file path) are left out.
 */
export function objectsByCluster(resources: readonly StateResource[]): ClusterObjects[] {
  const clusters = new Map<string, ClusterObjects>();
  for (const r of resources) {
    if (r.type !== PROVIDER_TYPE || !r.id) continue;
    const kubeconfig = plainValue(r.inputs?.kubeconfig ?? r.outputs?.kubeconfig);
    if (typeof kubeconfig === "string" && /apiVersion|clusters:/.test(kubeconfig))
      clusters.set(`${r.urn}::${r.id}`, { provider: `${r.urn}::${r.id}`, kubeconfig, objects: [] });
  }
  for (const r of resources) {
    if (!r.type.startsWith("kubernetes:") || r.custom === false || !r.provider) continue;
    const cluster = clusters.get(r.provider);
    const out = r.outputs ?? {};
    const metadata = (plainValue(out.metadata) ?? {}) as { name?: string; namespace?: string };
    const apiVersion = plainValue(out.apiVersion);
    const kind = plainValue(out.kind);
    if (!cluster || typeof apiVersion !== "string" || typeof kind !== "string" || !metadata.name) continue;
    cluster.objects.push({
      urn: r.urn,
      apiVersion,
      kind,
      name: metadata.name,
      ...(metadata.namespace ? { namespace: metadata.namespace } : {}),
    });
  }
  return [...clusters.values()].filter((c) => c.objects.length > 0);
}

/** An object of the stack found with a deletionTimestamp, and what holds it. */
export interface TerminatingObject extends ObjectRef {
  since: string;
  finalizers: string[];
}

/** Objects of one cluster looked at with one request: of one kind, in one namespace (or none). */
export interface ObjectLookup<T extends ObjectRef = ObjectRef> {
  apiVersion: string;
  kind: string;
  namespace?: string;
  objects: T[];
}

/** A cluster's objects by (apiVersion, kind, namespace), in the order each first appears. */
export function lookupsByKind<T extends ObjectRef>(objects: readonly T[]): ObjectLookup<T>[] {
  const lookups = new Map<string, ObjectLookup<T>>();
  for (const o of objects) {
    const key = JSON.stringify([o.apiVersion, o.kind, o.namespace ?? ""]);
    const lookup = lookups.get(key);
    if (lookup) lookup.objects.push(o);
    else
      lookups.set(key, {
        apiVersion: o.apiVersion,
        kind: o.kind,
        ...(o.namespace ? { namespace: o.namespace } : {}),
        objects: [o],
      });
  }
  return [...lookups.values()];
}

/**
 * An object as the API server returns it, read or listed: the client gives deletionTimestamp
 * as a Date for the kinds it knows and as the API's string for the others.
 */
export interface LiveObject {
  metadata?: {
    name?: string;
    namespace?: string;
    deletionTimestamp?: string | Date;
    finalizers?: string[];
  };
}

/** The object, if the API server has it with a deletionTimestamp. */
export function terminatingObject(
  ref: ObjectRef,
  live: LiveObject | undefined,
): TerminatingObject | undefined {
  const since = live?.metadata?.deletionTimestamp;
  if (!since) return undefined;
  return {
    apiVersion: ref.apiVersion,
    kind: ref.kind,
    name: ref.name,
    ...(ref.namespace ? { namespace: ref.namespace } : {}),
    since: new Date(since).toISOString(),
    finalizers: live.metadata?.finalizers ?? [],
  };
}

/**
 * Which of a lookup's objects are terminating, by the list of their kind in their namespace
 * (`items`), in the lookup's order: an object not in the list is gone, so not terminating.
 * Without a namespace only cluster-scoped items count (a list of a namespaced kind without one
 * holds every namespace's).
 */
export function terminatingAmong(lookup: ObjectLookup, items: readonly LiveObject[]): TerminatingObject[] {
  const listed = new Map<string, LiveObject>();
  for (const item of items)
    if (item.metadata?.name && (lookup.namespace || !item.metadata.namespace))
      listed.set(item.metadata.name, item);
  return lookup.objects.flatMap((o) => terminatingObject(o, listed.get(o.name)) ?? []);
}

/** The message `up` and `preview` stop with when the objects do not go in time. */
export function terminatingMessage(
  stack: string,
  objects: readonly TerminatingObject[],
  waitedSeconds: number,
) {
  const lines = objects.map(
    (o) =>
      `  ${o.kind} ${o.namespace ? `${o.namespace}/` : ""}${o.name}: deleted since ${o.since}, held by ${
        o.finalizers.length > 0 ? o.finalizers.join(", ") : "its dependents (foreground deletion)"
      }`,
  );
  return [
    `${objects.length} object${objects.length === 1 ? "" : "s"} of stack "${stack}" ${objects.length === 1 ? "is" : "are"} being deleted, and ${objects.length === 1 ? "it is" : "they are"} still there after ${waitedSeconds}s:`,
    ...lines,
    "Nothing was changed: an update now would report them as in place while they go.",
    "Each waits for the controller behind its finalizer (a NetworkPath for the bridge, a claim or composite for Crossplane, a CRD for its objects to go).",
    'If that controller runs, wait and run this again; if a destroy removed it, finish the destroy (`npm run pulumi -- destroy`), or remove the finalizer by hand (kubectl patch … --type=merge -p \'{"metadata":{"finalizers":null}}\') once nothing behind it needs cleaning.',
  ].join("\n");
}
