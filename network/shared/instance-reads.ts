import * as k8s from "@kubernetes/client-node";
import {
  unservedProblem,
  type NamedServices,
  type EndpointSliceLike,
  type InstanceServiceLike,
} from "../contract/instance-service";

/** What the bridge reads of an instance Service in the data-service cluster. */
export interface InstanceReads {
  /** The Service, or undefined when there is none. */
  service(namespace: string, name: string): Promise<InstanceServiceLike | undefined>;
  /** Its EndpointSlices (label `kubernetes.io/service-name`). */
  slices(namespace: string, name: string): Promise<EndpointSliceLike[]>;
}

/**
 * The reads as the bridge's data-plane identity (its `--data-plane-kubeconfig`): a Service and
 * its EndpointSlices in any namespace, the cluster-wide rights lib/bridge/rbac.ts
 * dataPlaneInstanceRules grants wherever an app cluster uses the proxy. The kernel hop gets the
 * Service and lists the slices as they are now. `fromWatchCache` (the haproxy hop's health
 * reader, every 2 s per group) lists both with resourceVersion "0", the Service by name: served
 * from the API server's watch cache, no etcd read.
 */
export function dataPlaneInstances(
  kubeconfig: string,
  opts: { fromWatchCache?: boolean } = {},
): InstanceReads {
  const kc = new k8s.KubeConfig();
  kc.loadFromString(kubeconfig);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const discovery = kc.makeApiClient(k8s.DiscoveryV1Api);
  const cached = opts.fromWatchCache ? { resourceVersion: "0" } : {};
  return {
    service: async (namespace, name) => {
      if (opts.fromWatchCache)
        return (
          await core.listNamespacedService({ namespace, fieldSelector: `metadata.name=${name}`, ...cached })
        ).items[0];
      try {
        return await core.readNamespacedService({ namespace, name });
      } catch (e) {
        if ((e as { code?: number }).code === 404) return undefined;
        throw e;
      }
    },
    slices: async (namespace, name) =>
      (
        await discovery.listNamespacedEndpointSlice({
          namespace,
          labelSelector: `kubernetes.io/service-name=${name}`,
          ...cached,
        })
      ).items,
  };
}

/**
 * The paths whose instance Service has no endpoint kube-proxy would send them to, by path id,
 * with why (instance-service.ts unservedProblem). A Service the identity may not read (403, an
 * environment made before these rights) or that does not answer says nothing. A Service that does
 * not exist says so only with `missing` (WireGuard's gateway dials the address the name had, and
 * nothing else checks it; the proxy's HAProxy reports an unresolved name itself). Each Service is
 * read once however many paths name it.
 */
export async function unservedOf(
  reads: InstanceReads,
  services: NamedServices,
  opts: { missing?: boolean } = {},
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  await Promise.all(
    [...services.values()].map(async ({ ref, paths }) => {
      let read: [InstanceServiceLike | undefined, EndpointSliceLike[]];
      try {
        read = await Promise.all([
          reads.service(ref.namespace, ref.name),
          reads.slices(ref.namespace, ref.name),
        ]);
      } catch {
        return;
      }
      const [service, slices] = read;
      for (const p of paths) {
        const problem = service
          ? unservedProblem(ref, p.port, service, slices)
          : opts.missing
            ? `Service ${ref.namespace}/${ref.name} does not exist, so its name does not resolve and nothing serves port ${p.port}`
            : undefined;
        if (problem) out[p.id] = problem;
      }
    }),
  );
  return out;
}
