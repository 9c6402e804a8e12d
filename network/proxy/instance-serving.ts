import type { NetworkPathObject } from "../../lib/bridge/model";
import type { InstanceReads } from "./instance-backends";
import { instanceServices, unservedProblem } from "./model/instance-serving";

/**
 * The group's paths whose instance Service has no endpoint kube-proxy would send them to, by
 * path id, with why (model/instance-serving.ts), from the reads the kernel hop uses too
 * (instance-backends.ts dataPlaneInstances; the health reader takes them from the watch cache).
 * A Service the identity may not read (403, an environment made before these rights) or that
 * does not answer says nothing: HAProxy's verdict stands. Each Service is read once however many
 * paths name it.
 */
export async function unservedPaths(
  reads: InstanceReads,
  live: readonly NetworkPathObject[],
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  await Promise.all(
    [...instanceServices(live).values()].map(async ({ ref, paths }) => {
      let read: [Awaited<ReturnType<InstanceReads["service"]>>, Awaited<ReturnType<InstanceReads["slices"]>>];
      try {
        read = await Promise.all([
          reads.service(ref.namespace, ref.name),
          reads.slices(ref.namespace, ref.name),
        ]);
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
