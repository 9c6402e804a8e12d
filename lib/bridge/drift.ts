import { proxyName } from "./grouping";

/**
 * Drift: a change to an object a group's stack made in the data plane, made by someone else
 * (kubectl, another controller). Pure: what counts as a change and which group it is of.
 * programs/bridge/drift-watch.ts watches the objects, programs/bridge/reconciler.ts runs the group
 * again with a refresh, so the engine sees the object as it is and puts it back.
 */

/** The kinds a group's stack makes in the data plane's namespace (TcpProxy, KernelPath). */
export const DRIFT_KINDS = ["ConfigMap", "Service", "Deployment", "NetworkPolicy", "EndpointSlice"] as const;
export type DriftKind = (typeof DRIFT_KINDS)[number];

/**
 * The label every such object carries (network/proxy/tcp-proxy.ts, kernel-path.ts), and the
 * WireGuard gateway's flows ConfigMap that groups patch (network/wireguard/model/render-k8s.ts).
 */
export const DRIFT_SELECTOR = "app.kubernetes.io/part-of=klutch,app.kubernetes.io/managed-by=pulumi";
/** The label that names the object's group: its proxy's name (lib/bridge/grouping.ts proxyName). */
const INSTANCE_LABEL = "app.kubernetes.io/instance";

/** One entry of `metadata.managedFields`, as far as a ConfigMap's keys are concerned (patch-drift.ts). */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  fieldsType?: string;
  fieldsV1?: unknown;
}

export interface WatchedObject {
  metadata?: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    managedFields?: ManagedFieldsEntry[];
  };
  spec?: unknown;
  data?: unknown;
  binaryData?: unknown;
  endpoints?: unknown;
  ports?: unknown;
}

/** One drift, as the group's Event and log name it. */
export interface Drift {
  kind: DriftKind;
  name: string;
  change: "deleted" | "changed";
  /** In an object groups share (lib/bridge/patch-drift.ts): the group's keys that changed. */
  keys?: string[];
}

/**
 * What of an object its stack set, compared before and after an update: a ConfigMap's data,
 * an EndpointSlice's endpoints and ports, the others' spec (status and metadata are not the
 * stack's to keep: controllers write them all the time).
 */
function content(kind: DriftKind, o: WatchedObject): string {
  if (kind === "ConfigMap") return JSON.stringify([o.data ?? {}, o.binaryData ?? {}]);
  if (kind === "EndpointSlice") return JSON.stringify([o.endpoints ?? [], o.ports ?? []]);
  return JSON.stringify(o.spec ?? {});
}

/**
 * The EndpointSlice controller copies a Service's labels onto the slices it writes for it
 * (kubernetes pkg/controller/endpointslice, `endpointslice.kubernetes.io/managed-by:
 * endpointslice-controller.k8s.io`), so a TcpProxy Service's slices carry the selector's labels
 * and change with every pod: they are the controller's, not the stack's. A KernelPath's own
 * slices name their own manager (network/proxy/kernel-path.ts).
 */
const SLICE_MANAGER = "endpointslice.kubernetes.io/managed-by";
const CONTROLLER_SLICES = "endpointslice-controller.k8s.io";

/** The drift an event is, or undefined for one that changed nothing the stack set. */
export function driftOf(
  kind: DriftKind,
  event: "update" | "delete",
  before: WatchedObject | undefined,
  after: WatchedObject,
): Drift | undefined {
  if (kind === "EndpointSlice" && after.metadata?.labels?.[SLICE_MANAGER] === CONTROLLER_SLICES)
    return undefined;
  const name = after.metadata?.name ?? "";
  if (event === "delete") return { kind, name, change: "deleted" };
  if (before && content(kind, before) !== content(kind, after)) return { kind, name, change: "changed" };
  return undefined;
}

/** The group an object is of, among the groups the bridge has: the one whose proxy name it carries. */
export function groupOfObject(o: WatchedObject, groups: readonly string[]): string | undefined {
  const instance = o.metadata?.labels?.[INSTANCE_LABEL];
  return instance === undefined ? undefined : groups.find((key) => proxyName(key) === instance);
}

/**
 * The kind a pulumi-kubernetes resource type makes (`kubernetes:apps/v1:Deployment` → Deployment);
 * a patch resource's is the kind it patches (`ConfigMapPatch` → ConfigMap): the stack holds its
 * part of that object.
 */
export function kubernetesKind(type: string): string | undefined {
  return /^kubernetes:[^:]+:(\w+?)(?:Patch)?$/.exec(type)?.[1];
}

/**
 * Engine steps that delete the object a resource made: its removal, and the old half of a
 * replacement (pulumi-kubernetes deletes a named object before it makes the new one).
 */
const DELETING_OPS: ReadonlySet<string> = new Set(["delete", "delete-replaced", "discard"]);

/** The engine event of a step (sdk/nodejs/automation/events.ts: StepEventMetadata). */
export interface StepStartLike {
  resourcePreEvent?: { metadata: { op: string; type: string; old?: { outputs?: Record<string, unknown> } } };
}

/** The object, `Kind/name`, a run's engine event says the run is deleting itself. */
export function objectDeletedByStep(event: StepStartLike): string | undefined {
  const step = event.resourcePreEvent?.metadata;
  if (!step || !DELETING_OPS.has(step.op)) return undefined;
  const kind = kubernetesKind(step.type);
  const name = (step.old?.outputs?.metadata as { name?: unknown } | undefined)?.name;
  return kind && typeof name === "string" ? `${kind}/${name}` : undefined;
}

/** How a drift reads in an Event and a log line. */
export function describeDrift(d: Drift, namespace: string): string {
  const keys =
    d.keys && d.keys.length > 0 ? ` (the group's ${plural(d.keys.length, "key")} ${d.keys.join(", ")})` : "";
  return `${d.kind} ${namespace}/${d.name}${keys} was ${d.change} outside the bridge`;
}

function plural(n: number, word: string): string {
  return n === 1 ? word : `${word}s`;
}

/**
 * The drifts noted for each group until its next run takes them (that run refreshes, so the
 * engine reads the objects as they are); a run that fails gives them back, so the retry
 * refreshes too.
 */
export class DriftLedger {
  private readonly noted = new Map<string, Drift[]>();

  note(key: string, drift: Drift): void {
    const list = this.noted.get(key) ?? [];
    const same = list.find(
      (d) => d.kind === drift.kind && d.name === drift.name && d.change === drift.change,
    );
    if (!same) list.push(drift);
    // Keys changed one after another in the same object are put back, and named, together.
    else if (drift.keys) same.keys = [...new Set([...(same.keys ?? []), ...drift.keys])].sort();
    this.noted.set(key, list);
  }

  take(key: string): Drift[] {
    const list = this.noted.get(key) ?? [];
    this.noted.delete(key);
    return list;
  }

  giveBack(key: string, drifts: readonly Drift[]): void {
    for (const d of drifts) this.note(key, d);
  }
}
