import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { NetworkPathObject, PathProblem } from "../../lib/bridge/model";
import { pathId, portRangeExhausted, proxyName } from "../../lib/bridge/model";
import { localProxyDir, toConnection } from "./model/target";
import type { BridgeTarget as Target } from "../contract/bridge-target";
import { admitConnections } from "./model/admission";
import { localProxyPath } from "./local-proxy-path";
import { TcpProxy } from "./tcp-proxy";
import { BRIDGE_POD_LABELS } from "../../lib/bridge/deployment";
import { KernelPath } from "./kernel-path";
import type { ProxyConnection } from "./model/types";
import { listenerKey, listenerKeys } from "./model/types";

/**
 * The bridge's Pulumi program for one proxy group (a consumer namespace): the proxy
 * path for all its connections, realised by this project's components and dynamic
 * providers. Its outputs: `endpoints`, each realised path's hostForConsumer/port by id, and
 * `problems`, why each other path is not realised (a connection the proxy cannot serve, or
 * no port left in the group's range). A bad or surplus connection is left out of the proxy
 * rather than failing the update, so the group's other paths keep working.
 */
export function proxyProgram(
  group: string,
  paths: NetworkPathObject[],
  target: Target,
): () => Promise<Record<string, unknown>> {
  return () => {
    const { admitted: connections, rejected } = admitConnections(paths.map(toConnection));
    /** The problems of the connections whose listener got no port, plus the rejected ones. */
    const problemsOf = (unplaced: readonly string[] | undefined, ownListeners: number) => {
      const out: Record<string, PathProblem> = { ...rejected };
      const left = new Set(unplaced ?? []);
      if (left.size === 0) return out;
      const needed = listenerKeys(connections).length;
      const reserved = target.kind === "local" ? (target.reservedPorts?.length ?? 0) : 0;
      const problem = portRangeExhausted(
        group,
        target.portRange,
        ownListeners,
        needed,
        target.kind,
        reserved,
      );
      for (const c of connections) if (left.has(listenerKey(c))) out[c.id] = problem;
      return out;
    };
    if (target.kind === "kubernetes" && target.hop === "kernel") {
      const provider = new k8s.Provider("data-plane", { kubeconfig: pulumi.secret(target.kubeconfig) });
      const kernelPath = new KernelPath(proxyName(group), {
        provider,
        namespace: target.namespace,
        connections,
        ...(target.backends ? { backends: target.backends } : {}),
        portRange: target.portRange,
        serviceType: target.serviceType as "ClusterIP",
        exposure: target.exposure,
        skipAwait: target.skipAwait,
        ...(target.nodeHost ? { nodeHost: target.nodeHost } : {}),
        ...(target.heldOutPorts?.length ? { reservedPorts: target.heldOutPorts } : {}),
        overflow: "leave-out",
      });
      return Promise.resolve({
        endpoints: kernelPath.endpoints,
        problems: kernelPath.unplaced.apply((u) => ({ ...problemsOf(u, 0), ...kernelPath.problems })),
      });
    }
    if (target.kind === "kubernetes") {
      const provider = new k8s.Provider("data-plane", { kubeconfig: pulumi.secret(target.kubeconfig) });
      const proxy = new TcpProxy(proxyName(group), {
        provider,
        namespace: target.namespace,
        connections,
        portRange: target.portRange,
        serviceType: target.serviceType as "ClusterIP",
        exposure: target.exposure,
        dedicatedCpus: target.dedicatedCpus,
        skipAwait: target.skipAwait,
        // Not pulumi-kubernetes' Service await: it sleeps 10 s after every rollout.
        listenerCheck: { kubeconfig: pulumi.secret(target.kubeconfig) },
        ...(target.proxyImage ? { image: target.proxyImage } : {}),
        ...(target.nodeHost ? { nodeHost: target.nodeHost } : {}),
        ...(target.heldOutPorts?.length ? { reservedPorts: target.heldOutPorts } : {}),
        overflow: "leave-out",
        // The bridge's pods read each path's health there (path-health.ts).
        healthReaders: { ...BRIDGE_POD_LABELS },
      });
      // The pod's stats and health ports lie outside the range (TcpProxy reserves them).
      return Promise.resolve({
        endpoints: proxy.endpoints,
        problems: proxy.unplaced.apply((u) => problemsOf(u, 0)),
      });
    }
    // Local: an HAProxy process on this machine (localProxyPath); its own stats and health
    // listeners take ports from the same allocation, hence 2 own listeners in the problems.
    const { endpoints, unplaced } = localProxyPath(
      { ports: "ports", haproxy: "haproxy" },
      {
        connections,
        portRange: target.portRange,
        ...(target.reservedPorts?.length ? { reserved: target.reservedPorts } : {}),
        bindAddress: target.bindAddress,
        dir: localProxyDir(target.stateDir, group),
        // Used only if the allocation is created while paths already have ports: a stack
        // re-created after an unreadable checkpoint (programs/bridge/checkpoint.ts) keeps them.
        seed: seedPorts(paths, connections),
      },
    );
    return Promise.resolve({
      endpoints,
      problems: unplaced.apply((u) => problemsOf(u, 2)),
    });
  };
}

/** Each admitted connection's listener → the port its path reports now (status.port). */
export function seedPorts(
  paths: NetworkPathObject[],
  connections: ProxyConnection[],
): Record<string, number> {
  const byId = new Map(paths.map((p) => [pathId(p), p]));
  const seed: Record<string, number> = {};
  for (const c of connections) {
    const port = byId.get(c.id)?.status?.port;
    if (typeof port === "number") seed[listenerKey(c)] = port;
  }
  return seed;
}
