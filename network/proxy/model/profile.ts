import { HaproxyOptions } from "./haproxy-config";

/** Threads per pod on shared CPUs; set explicitly because HAProxy would size itself to the node, not the pod. */
export const DEFAULT_NBTHREAD = 2;

export type ProfileOptions = Omit<HaproxyOptions, "bindAddress" | "statsPort" | "healthPort">;

export interface ContainerResources {
  requests: Record<string, string>;
  limits: Record<string, string>;
}

/**
 * HAProxy settings of a proxy: shared CPUs (DEFAULT_NBTHREAD threads, sleeping in the
 * poller), or `dedicatedCpus` whole CPUs (one thread each, busy polling); `overrides` last.
 */
export function haproxyOptionsFor(dedicatedCpus?: number, overrides: ProfileOptions = {}): ProfileOptions {
  const profile =
    dedicatedCpus !== undefined
      ? { nbthread: dedicatedCpus, busyPolling: true }
      : { nbthread: DEFAULT_NBTHREAD };
  return { ...profile, ...overrides };
}

/**
 * Container resources of a proxy: a small request on shared CPUs, or requests equal to
 * limits with whole CPUs (Guaranteed QoS: a kubelet with the static CPU manager policy then
 * gives the container exclusive cores, which busy polling needs).
 */
export function proxyResources(dedicatedCpus?: number): ContainerResources {
  if (dedicatedCpus === undefined) {
    return { requests: { cpu: "100m", memory: "64Mi" }, limits: { memory: "256Mi" } };
  }
  const guaranteed = { cpu: String(dedicatedCpus), memory: "256Mi" };
  return { requests: guaranteed, limits: { ...guaranteed } };
}

/** Why `dedicatedCpus` and the HAProxy overrides cannot be used together, or undefined. */
export function profileProblem(dedicatedCpus: unknown, overrides: ProfileOptions = {}): string | undefined {
  if (dedicatedCpus !== undefined) {
    if (
      typeof dedicatedCpus !== "number" ||
      !Number.isInteger(dedicatedCpus) ||
      dedicatedCpus < 1 ||
      dedicatedCpus > 64
    )
      return `dedicatedCpus must be a whole number of CPUs from 1 to 64 (got ${JSON.stringify(dedicatedCpus)}); leave it unset to share CPUs`;
    if (overrides.nbthread !== undefined && overrides.nbthread !== dedicatedCpus)
      return `haproxy.nbthread ${overrides.nbthread} differs from dedicatedCpus ${dedicatedCpus}; with dedicated CPUs HAProxy runs one thread per CPU, so drop haproxy.nbthread`;
    return undefined;
  }
  if (overrides.busyPolling)
    return "haproxy.busyPolling keeps a CPU fully busy per thread, so it needs CPUs of the proxy's own; set dedicatedCpus instead";
  return undefined;
}
