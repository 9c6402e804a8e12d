import type { NetworkPathObject } from "../../../lib/bridge/model";
import type { PathHealth } from "../../contract/implementation";
import { kernelPortName } from "./kernel-path";
import { toConnection } from "./target";

/**
 * A kernel path's health from a TCP connection the bridge opens through it: the pure judgement
 * behind ../kernel-health.ts. The kernel hop has no HAProxy to ask, and the objects it writes
 * say nothing of whether a client gets through: kube-proxy programs a Service's rules on its
 * own schedule, and until it has read the mirrored EndpointSlices it rejects connections to the
 * Service's port (iptables and nftables modes both answer a port without endpoints with a
 * reject, so the client sees "connection refused"). A claim went Ready 2.6 s after it was
 * applied while psql to its host and port was refused that way. So the bridge dials each
 * connection's Service port at the ClusterIP, the hop kube-proxy programs for every Service
 * type (a NodePort's and a LoadBalancer's rules come from the same sync), and through it the
 * instance: a connection that is accepted went through kube-proxy's DNAT to the instance.
 */

/** What one dial of a connection's Service port gave. */
export type DialOutcome = "connected" | "refused" | "no-answer";

/** What the bridge reads of the kernel path's Service (core/v1). */
export interface KernelServiceLike {
  spec?: { clusterIP?: string; ports?: { name?: string; port: number }[] };
}

/** One dial the bridge makes: the path it speaks for, and where. */
export interface KernelDial {
  id: string;
  address: string;
  port: number;
  /** The instance behind it, for the message. */
  instance: string;
}

/**
 * The dials for a group's live paths: each path whose connection has a port on the Service
 * (kernel-path.ts names it kernelPortName). A path without one was not placed or has a problem
 * of its own, which its run reports; a Service without a ClusterIP yet gives no dial.
 */
export function kernelDials(
  service: KernelServiceLike | undefined,
  live: readonly NetworkPathObject[],
): KernelDial[] {
  const address = service?.spec?.clusterIP;
  if (!address || address === "None") return [];
  const ports = new Map((service?.spec?.ports ?? []).map((p) => [p.name ?? "", p.port]));
  return live.flatMap((p) => {
    const c = toConnection(p);
    const port = ports.get(kernelPortName(c.id));
    return port === undefined ? [] : [{ id: c.id, address, port, instance: `${c.instanceHost}:${c.port}` }];
  });
}

/**
 * Each dialled path's health. When no dial got an answer at all, the bridge does not reach the
 * cluster's Service network (it runs outside the cluster), so nothing is known and nothing is
 * said, as the HAProxy reader leaves paths alone when no pod answers (./path-health.ts).
 */
export function judgeKernelHealth(
  service: string,
  dials: readonly (KernelDial & { outcome: DialOutcome })[],
): Record<string, PathHealth> {
  if (dials.every((d) => d.outcome === "no-answer")) return {};
  const out: Record<string, PathHealth> = {};
  for (const d of dials) {
    const via = `Service ${service} port ${d.port} (${d.address}:${d.port})`;
    out[d.id] =
      d.outcome === "connected"
        ? {
            ready: true,
            reason: "ConnectivityEstablished",
            message: `a connection to ${via} reaches ${d.instance} through kube-proxy`,
          }
        : {
            ready: false,
            reason: "InstanceUnreachable",
            message:
              d.outcome === "refused"
                ? `a connection to ${via} is refused: kube-proxy has not programmed the path's endpoints yet, or the instance ${d.instance} refuses connections`
                : `a connection to ${via} got no answer: the instance ${d.instance} does not answer through kube-proxy`,
          };
  }
  return out;
}
