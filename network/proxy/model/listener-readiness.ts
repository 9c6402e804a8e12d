/**
 * When a proxy's listeners are in service: the pure judgement behind the ServiceListeners
 * resource (../service-listeners.ts), which the bridge uses instead of pulumi-kubernetes'
 * Service await.
 *
 * That await (pulumi-kubernetes provider/pkg/await/service.go, `processEndpointEvent`) sleeps
 * 10 s after every change to the Service's Endpoints before it calls the Service ready, and a
 * proxy's Endpoints change on every rollout. A connection added to a group therefore waited
 * 10.3 of its 12.5 s engine run there (the bridge's reconcile trace). What the wait stands
 * for is checked here directly instead, from the objects the Service's consumers use:
 *
 * - the Service's EndpointSlices (label `kubernetes.io/service-name`, written by the
 *   EndpointSlice controller; kube-proxy programs its rules from them) list at least one ready
 *   endpoint, and every ready endpoint is a pod running the current config (its
 *   `checksum/config` annotation), so no connection can land on a pod without the new listener;
 * - every listener port is among the slices' ports.
 *
 * Ready is `conditions.ready`; the API documents an unset value as ready ("nil should be
 * interpreted as true", discovery.k8s.io/v1 EndpointConditions). Terminating pods are
 * published with ready=false, so a rolled-out pod that is shutting down does not count.
 */

/** The parts of a discovery.k8s.io/v1 EndpointSlice read here. */
export interface SliceView {
  ports?: { port?: number; protocol?: string }[] | null;
  endpoints?: {
    conditions?: { ready?: boolean | null } | null;
    targetRef?: { kind?: string; name?: string } | null;
  }[];
}

export type ListenerReadiness = { ready: true; pods: string[] } | { ready: false; waitingFor: string };

/**
 * Whether the Service serves `ports` from pods of the current config only.
 * `podChecksums` maps each pod the selector finds to its `checksum/config` annotation.
 */
export function listenerReadiness(
  slices: readonly SliceView[],
  podChecksums: ReadonlyMap<string, string | undefined>,
  checksum: string,
  ports: readonly number[],
): ListenerReadiness {
  const ready = new Set<string>();
  const published = new Set<number>();
  for (const slice of slices) {
    const endpoints = (slice.endpoints ?? []).filter((e) => e.conditions?.ready !== false);
    if (endpoints.length === 0) continue;
    for (const p of slice.ports ?? []) if (p.port !== undefined) published.add(p.port);
    for (const e of endpoints) ready.add(e.targetRef?.kind === "Pod" ? (e.targetRef.name ?? "?") : "?");
  }
  if (ready.size === 0)
    return { ready: false, waitingFor: "a ready endpoint in the Service's EndpointSlices" };
  const stale = [...ready].filter((pod) => pod === "?" || podChecksums.get(pod) !== checksum).sort();
  if (stale.length > 0) {
    return {
      ready: false,
      waitingFor: `ready endpoints of the current config only; still published: ${stale.join(", ")}`,
    };
  }
  const missing = ports.filter((p) => !published.has(p));
  if (missing.length > 0) {
    return { ready: false, waitingFor: `port(s) ${missing.join(", ")} in the Service's EndpointSlices` };
  }
  return { ready: true, pods: [...ready].sort() };
}
