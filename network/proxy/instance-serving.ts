import type { NetworkPathObject } from "../../lib/bridge/model";
import type { InstanceReads } from "./instance-backends";
import { instanceServices } from "./model/instance-serving";
import { unservedOf } from "../shared/instance-reads";

/**
 * The group's paths whose instance Service has no endpoint kube-proxy would send them to, by
 * path id, with why (model/instance-serving.ts), from the reads the kernel hop uses too
 * (instance-backends.ts dataPlaneInstances; the health reader takes them from the watch cache).
 * A Service the identity may not read (403, an environment made before these rights) or that
 * does not answer says nothing: HAProxy's verdict stands. Each Service is read once however many
 * paths name it.
 */
export function unservedPaths(
  reads: InstanceReads,
  live: readonly NetworkPathObject[],
): Promise<Record<string, string>> {
  return unservedOf(reads, instanceServices(live));
}
