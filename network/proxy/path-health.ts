import * as k8s from "@kubernetes/client-node";
import { proxyName } from "../../lib/bridge/model";
import * as fs from "node:fs";
import * as path from "node:path";
import type { NetworkPathObject } from "../../lib/bridge/model";
import type { HealthReader, HealthReaderOptions, PathHealth } from "../contract/implementation";
import { BACKENDS_PATH, DEFAULT_HEALTH_PORT } from "./model/haproxy-config";
import { dataPlaneInstances, type InstanceReads } from "./instance-backends";
import { unservedPaths } from "./instance-serving";
import { kernelHealth } from "./kernel-health";
import { localHaproxyProvider } from "./local-haproxy";
import { PROCESS_WORDS, healthBind, judgeHealth, parseBackends, type PodAnswer } from "./model/path-health";
import { withUnserved } from "./model/instance-serving";
import { localProxyDir } from "./model/target";

/** How long one page of a pod's health frontend may take: it answers from memory. */
const PAGE_TIMEOUT_MS = 2_000;
/** More pages than any group can have (BACKENDS_PER_PAGE each): a stop for a frontend that never says 503. */
const MAX_PAGES = 1_000;

/**
 * Every page of one pod's backend answer (haproxy-config.ts BACKENDS_PATH), or undefined when
 * the pod did not answer. The bridge's pods reach the proxy pods' health port through the
 * NetworkPolicy's rule for them (tcp-proxy.ts); a bridge outside the cluster gets no answer.
 */
async function podBackends(ip: string, port = DEFAULT_HEALTH_PORT): Promise<Map<string, number> | undefined> {
  const host = ip.includes(":") ? `[${ip}]` : ip;
  const all = new Map<string, number>();
  for (let page = 0; page < MAX_PAGES; page++) {
    try {
      const r = await fetch(`http://${host}:${port}${BACKENDS_PATH}/${page}`, {
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
 * The proxy's health reader (its spec's `pulumi.health`). On this machine: the group's HAProxy
 * process, alive by its pid file, and its health frontend (localHealth). On a cluster: the
 * group's Ready HAProxy pods, listed
 * as the data-plane identity may (pods in its namespace, lib/bridge/rbac.ts dataPlaneRules), and
 * each one's backends; for the kernel hop (no HAProxy), a dial through each path's Service port
 * (./kernel-health.ts). Not for a cluster without kubelets (`skipAwait`: no pod ever runs there).
 */
export function proxyHealthReader(opts: HealthReaderOptions): HealthReader {
  const core = opts.kubeconfig ? coreClient(opts.kubeconfig) : undefined;
  const serving: InstanceReads | undefined = opts.kubeconfig
    ? dataPlaneInstances(opts.kubeconfig, { fromWatchCache: true })
    : undefined;
  return {
    reads: (_key, target) => target.kind === "local" || (core !== undefined && !target.skipAwait),
    read: async (key, target, live) => {
      if (target.kind === "local") return localHealth(key, target.stateDir, live);
      if (!core) return {};
      if (target.hop === "kernel") return kernelHealth(core, key, target, live);
      const proxy = proxyName(key);
      // resourceVersion "0": from the API server's watch cache, not a quorum read of etcd, so a
      // poll every 2 s of 100 groups costs the API server no etcd round trip (Kubernetes API
      // concepts, "Semantics for get and list": resourceVersion="0" is "Any").
      const pods = await core.listNamespacedPod({
        namespace: target.namespace,
        labelSelector: `app.kubernetes.io/name=haproxy,app.kubernetes.io/instance=${proxy}`,
        resourceVersion: "0",
      });
      const ready = pods.items.filter(isReady);
      const [answers, unserved] = await Promise.all([
        Promise.all(
          ready.map(async (p): Promise<PodAnswer> => ({
            pod: p.metadata?.name ?? "",
            backends: await podBackends(p.status!.podIP!),
          })),
        ),
        // The instance's endpoints say a lost pod at once; HAProxy's checks take seconds more.
        serving ? unservedPaths(serving, live) : Promise.resolve({}),
      ]);
      return withUnserved(judgeHealth(proxy, target.namespace, live, ready.length, answers), unserved);
    },
  };
}

function coreClient(kubeconfig: string): k8s.CoreV1Api {
  const kc = new k8s.KubeConfig();
  kc.loadFromString(kubeconfig);
  return kc.makeApiClient(k8s.CoreV1Api);
}

/**
 * The local target's group: its HAProxy process (one replica) by its pid file, and its health
 * frontend, at the address and port its config binds (each group's process has ports of its own
 * from the group's allocation, network/proxy/local-proxy-path.ts). No config yet: the group has
 * not run here, nothing is said. A dead process: ProxyUnavailable, and the run this starts (the
 * poll sees the change) starts it again, since LocalHaproxy's diff counts a dead process a change.
 */
async function localHealth(
  key: string,
  stateDir: string,
  live: readonly NetworkPathObject[],
): Promise<Record<string, PathHealth>> {
  const dir = localProxyDir(stateDir, key);
  let config: string;
  try {
    config = fs.readFileSync(path.join(dir, "haproxy.cfg"), "utf8");
  } catch {
    return {};
  }
  const bind = healthBind(config);
  if (!bind) return {};
  const alive = localHaproxyProvider.pidOf(dir) !== undefined;
  const answers: PodAnswer[] = alive
    ? [{ pod: "haproxy", backends: await podBackends(bind.host, bind.port) }]
    : [];
  return judgeHealth(key, dir, live, alive ? 1 : 0, answers, {
    ...PROCESS_WORDS,
    unavailable: () => PROCESS_WORDS.unavailable(dir),
  });
}
