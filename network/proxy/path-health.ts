import * as k8s from "@kubernetes/client-node";
import { proxyName } from "../../lib/bridge/model";
import type { HealthReader } from "../contract/implementation";
import { BACKENDS_PATH, DEFAULT_HEALTH_PORT } from "./model/haproxy-config";
import { kernelHealth } from "./kernel-health";
import { judgeHealth, parseBackends, type PodAnswer } from "./model/path-health";

/** How long one page of a pod's health frontend may take: it answers from memory. */
const PAGE_TIMEOUT_MS = 2_000;
/** More pages than any group can have (BACKENDS_PER_PAGE each): a stop for a frontend that never says 503. */
const MAX_PAGES = 1_000;

/**
 * Every page of one pod's backend answer (haproxy-config.ts BACKENDS_PATH), or undefined when
 * the pod did not answer. The bridge's pods reach the proxy pods' health port through the
 * NetworkPolicy's rule for them (tcp-proxy.ts); a bridge outside the cluster gets no answer.
 */
async function podBackends(ip: string): Promise<Map<string, number> | undefined> {
  const host = ip.includes(":") ? `[${ip}]` : ip;
  const all = new Map<string, number>();
  for (let page = 0; page < MAX_PAGES; page++) {
    try {
      const r = await fetch(`http://${host}:${DEFAULT_HEALTH_PORT}${BACKENDS_PATH}/${page}`, {
        signal: AbortSignal.timeout(PAGE_TIMEOUT_MS),
      });
      // Past the last page (or no backend at all) the frontend has no rule left: 503.
      if (r.status === 503) return all;
      if (r.status !== 200) return undefined;
      for (const [backend, usable] of parseBackends(await r.text())) all.set(backend, usable);
    } catch {
      return undefined;
    }
  }
  return all;
}

const isReady = (p: k8s.V1Pod) =>
  !p.metadata?.deletionTimestamp &&
  Boolean(p.status?.podIP) &&
  (p.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");

/**
 * The proxy's health reader (its spec's `pulumi.health`): the group's Ready HAProxy pods, listed
 * as the data-plane identity may (pods in its namespace, lib/bridge/rbac.ts dataPlaneRules), and
 * each one's backends; for the kernel hop (no HAProxy), a dial through each path's Service port
 * (./kernel-health.ts). Not for a cluster without kubelets (`skipAwait`: no pod ever runs there).
 */
export function proxyHealthReader(opts: { kubeconfig: string }): HealthReader {
  const kc = new k8s.KubeConfig();
  kc.loadFromString(opts.kubeconfig);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  return {
    reads: (_key, target) => !target.skipAwait,
    read: async (key, target, live) => {
      if (target.hop === "kernel") return kernelHealth(core, key, target, live);
      const proxy = proxyName(key);
      const pods = await core.listNamespacedPod({
        namespace: target.namespace,
        labelSelector: `app.kubernetes.io/name=haproxy,app.kubernetes.io/instance=${proxy}`,
      });
      const ready = pods.items.filter(isReady);
      const answers: PodAnswer[] = await Promise.all(
        ready.map(async (p) => ({
          pod: p.metadata?.name ?? "",
          backends: await podBackends(p.status!.podIP!),
        })),
      );
      return judgeHealth(proxy, target.namespace, live, ready.length, answers);
    },
  };
}
