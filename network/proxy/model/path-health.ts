import type { NetworkPathObject } from "../../../lib/bridge/model";
import type { PathHealth } from "../../contract/implementation";
import { admitConnections } from "./admission";
import { sectionName } from "./haproxy-config";
import { toConnection } from "./target";

/**
 * A proxy path's health from HAProxy's own health checks, as its pods' health frontends
 * answer them (haproxy-config.ts BACKENDS_PATH): the pure judgement behind ../path-health.ts.
 * HAProxy checks every backend's one server on each pod (`check inter 2s fastinter 500ms downinter 1s fall 3 rise 2`), so
 * a connection through the proxy reaches the instance exactly when its backend has a usable
 * server on the pod kube-proxy picks. Rather than a second prober, the bridge reads that.
 */

/** The answer of one page: `<backend> <usable servers>` a line. */
export function parseBackends(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    const m = /^(\S+) (\d+)$/.exec(line.trim());
    if (m) out.set(m[1]!, Number(m[2]));
  }
  return out;
}

/** What one Ready proxy pod said: its backends' usable servers, or undefined when it did not answer. */
export interface PodAnswer {
  pod: string;
  backends: Map<string, number> | undefined;
}

/** How the judgement names the proxy's replicas: the pods of a cluster, or the local target's process. */
export interface HealthWords {
  /** What no usable replica means, for the proxy named `namespace/name` (or its directory). */
  unavailable: (proxy: string) => string;
  replicas: string;
}

export const POD_WORDS: HealthWords = {
  unavailable: (proxy) => `no pod of the proxy ${proxy} is Ready, so no connection gets through`,
  replicas: "proxy pods",
};

export const PROCESS_WORDS: HealthWords = {
  unavailable: (dir) =>
    `the proxy's HAProxy process (${dir}) is not running, so no connection gets through; the group's next run starts it again`,
  replicas: "HAProxy processes",
};

/**
 * Where the rendered config's health frontend listens (haproxy-config.ts renders `frontend
 * health` with one `bind <address>:<port>`): the local target's process has a port of its own.
 */
export function healthBind(config: string): { host: string; port: number } | undefined {
  const lines = config.split("\n");
  const start = lines.findIndex((l) => l.trim() === "frontend health");
  if (start < 0) return undefined;
  for (const line of lines.slice(start + 1)) {
    if (/^\S/.test(line)) break;
    const m = /^\s+bind\s+(\S+):(\d+)\s*$/.exec(line);
    if (m) return { host: m[1]!.replace(/^\[|\]$/g, ""), port: Number(m[2]) };
  }
  return undefined;
}

/**
 * Each admitted path's health. No Ready pod: no connection can get through. No pod answered
 * (the bridge cannot reach them): nothing is known, so nothing is said. A pod that does not
 * know a path's backend runs an older config: it is left out of that path's count.
 */
export function judgeHealth(
  proxy: string,
  namespace: string,
  live: readonly NetworkPathObject[],
  readyPods: number,
  answers: readonly PodAnswer[],
  words: HealthWords = POD_WORDS,
): Record<string, PathHealth> {
  const out: Record<string, PathHealth> = {};
  const { admitted } = admitConnections(live.map(toConnection));
  if (readyPods === 0) {
    for (const c of admitted)
      out[c.id] = {
        ready: false,
        reason: "ProxyUnavailable",
        message: words.unavailable(`${namespace}/${proxy}`),
      };
    return out;
  }
  const answered = answers.flatMap((a) => (a.backends ? [a.backends] : []));
  for (const c of admitted) {
    const counts = answered.flatMap((b) => {
      const n = b.get(sectionName("bk", c.id));
      return n === undefined ? [] : [n];
    });
    if (counts.length === 0) continue;
    const down = counts.filter((n) => n === 0).length;
    out[c.id] =
      down === 0
        ? {
            ready: true,
            reason: "ConnectivityEstablished",
            message: `HAProxy reaches ${c.instanceHost}:${c.port}`,
          }
        : {
            ready: false,
            reason: "InstanceUnreachable",
            message: `HAProxy's health checks of ${c.instanceHost}:${c.port} fail on ${down} of ${counts.length} ${words.replicas}: the instance is down or refuses connections, or its host does not resolve`,
          };
  }
  return out;
}
