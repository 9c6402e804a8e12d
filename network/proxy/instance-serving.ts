import * as k8s from "@kubernetes/client-node";
import type { NetworkPathObject } from "../../lib/bridge/model";
import type { InstanceServiceLike } from "./model/kernel-path";
import {
  instanceServices,
  unservedProblem,
  type ServiceRef,
  type ServingSliceLike,
} from "./model/instance-serving";

/** What the proxy's health reader reads of an instance Service (fakes in the unit tests). */
export interface ServingReads {
  /** The Service, or undefined when there is none. */
  service(ref: ServiceRef): Promise<(InstanceServiceLike & { spec?: { clusterIP?: string } }) | undefined>;
  /** Its EndpointSlices (label `kubernetes.io/service-name`). */
  slices(ref: ServiceRef): Promise<ServingSliceLike[]>;
}

/**
 * The reads as the bridge's data-plane identity: list Services by name and EndpointSlices by
 * their Service's label in any namespace (lib/bridge/rbac.ts dataPlaneInstanceRules, given
 * wherever an app cluster uses the proxy). Both with resourceVersion "0": served from the API
 * server's watch cache, no etcd read, since the proxy's reader runs every 2 s per group.
 */
export function dataPlaneServingReads(core: k8s.CoreV1Api, discovery: k8s.DiscoveryV1Api): ServingReads {
  return {
    service: async ({ namespace, name }) =>
      (
        await core.listNamespacedService({
          namespace,
          fieldSelector: `metadata.name=${name}`,
          resourceVersion: "0",
        })
      ).items[0],
    slices: async ({ namespace, name }) =>
      (
        await discovery.listNamespacedEndpointSlice({
          namespace,
          labelSelector: `kubernetes.io/service-name=${name}`,
          resourceVersion: "0",
        })
      ).items,
  };
}

/**
 * The group's paths whose instance Service has no endpoint kube-proxy would send them to, by
 * path id, with why (model/instance-serving.ts). A Service the identity may not read (403, an
 * environment made before these rights) or that does not answer says nothing: HAProxy's verdict
 * stands. Each Service is read once however many paths name it.
 */
export async function unservedPaths(
  reads: ServingReads,
  live: readonly NetworkPathObject[],
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  await Promise.all(
    [...instanceServices(live).values()].map(async ({ ref, paths }) => {
      let read: [Awaited<ReturnType<ServingReads["service"]>>, ServingSliceLike[]];
      try {
        read = await Promise.all([reads.service(ref), reads.slices(ref)]);
      } catch {
        return;
      }
      const [service, slices] = read;
      if (!service) return;
      for (const p of paths) {
        const problem = unservedProblem(ref, p.port, service, slices);
        if (problem) out[p.id] = problem;
      }
    }),
  );
  return out;
}
