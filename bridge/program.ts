import * as path from "node:path";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { TcpProxy } from "../components/network/proxy/tcp-proxy";
import type { Endpoint, NetworkPathObject } from "../lib/bridge/model";
import { pathId, proxyName, realisationOf, unsupportedImplementation } from "../lib/bridge/model";
import { consumerEndpoints, renderHaproxyConfig } from "../lib/network/proxy/haproxy-config";
import type { PortRange, ProxyConnection } from "../lib/network/proxy/types";
import { listenerKeys } from "../lib/network/proxy/types";
import { ConnectivityProbe } from "../providers/connectivity-probe";
import { LocalHaproxy } from "../providers/local-haproxy";
import { PortAllocation } from "../providers/port-allocation";

/** Where a group's proxy runs. */
export type Target =
  | { kind: "local"; stateDir: string; bindAddress: string; portRange: PortRange }
  | {
      kind: "kubernetes";
      kubeconfig: string;
      namespace: string;
      portRange: PortRange;
      serviceType: string;
      /** Whole CPUs per proxy pod (TcpProxy `dedicatedCpus`); shared CPUs when unset. */
      dedicatedCpus?: number;
      /** Do not wait for the proxy's pods (a cluster without kubelets, e.g. the local ones). */
      skipAwait?: boolean;
    };

const STATS = "~stats";
const HEALTH = "~health";

export function toConnection(p: NetworkPathObject): ProxyConnection {
  return {
    id: pathId(p),
    instanceHost: p.spec.instanceHost,
    port: p.spec.port,
    ...(p.spec.enhancements ? { enhancements: p.spec.enhancements } : {}),
  };
}

/**
 * The Pulumi program of one group (a consumer namespace and implementation): the proxy
 * path for all its connections, realised by this project's components and dynamic
 * providers. Its one output, `endpoints`, is each path's hostForConsumer/port by id.
 */
export function groupProgram(
  group: string,
  paths: NetworkPathObject[],
  target: Target,
): () => Promise<Record<string, unknown>> {
  const implementation = group.slice(group.lastIndexOf("/") + 1);
  const realisation = realisationOf(implementation);
  if (realisation === "routed") return routedProgram(paths);
  if (realisation !== "proxy") {
    return () => Promise.reject(new Error(unsupportedImplementation(implementation)));
  }
  return () => {
    const connections = paths.map(toConnection);
    if (target.kind === "kubernetes") {
      const provider = new k8s.Provider("data-plane", { kubeconfig: pulumi.secret(target.kubeconfig) });
      const proxy = new TcpProxy(proxyName(group), {
        provider,
        namespace: target.namespace,
        connections,
        portRange: target.portRange,
        serviceType: target.serviceType as "ClusterIP",
        dedicatedCpus: target.dedicatedCpus,
        skipAwait: target.skipAwait,
      });
      return Promise.resolve({ endpoints: proxy.endpoints });
    }
    // Local: the proxy's own stats and health listeners take ports from the same
    // allocation, so several groups' proxies never collide on this machine.
    const ports = new PortAllocation("ports", {
      range: target.portRange,
      ids: [...listenerKeys(connections), STATS, HEALTH],
    });
    const endpoints: pulumi.Output<Record<string, Endpoint>> = ports.assignments.apply((assignments) =>
      consumerEndpoints(connections, assignments, target.bindAddress),
    );
    const config = ports.assignments.apply((assignments) =>
      renderHaproxyConfig(connections, assignments, {
        bindAddress: target.bindAddress,
        statsPort: assignments[STATS],
        healthPort: assignments[HEALTH],
        nbthread: 1,
      }),
    );
    new LocalHaproxy("haproxy", {
      dir: path.join(target.stateDir, "proxies", group.replace(/[^a-zA-Z0-9-]/g, "_")),
      config,
    });
    return Promise.resolve({ endpoints });
  };
}

/**
 * Routed implementations (WireGuard, VPC peering, OpenStack routes): the environment stack
 * built the network between app clusters and data services, so each consumer dials the
 * instance itself. Per path, a ConnectivityProbe checks from the bridge (which runs in the
 * data-service network) that the instance accepts TCP; a failure is reported, not thrown.
 */
export function routedProgram(paths: NetworkPathObject[]): () => Promise<Record<string, unknown>> {
  return () => {
    const endpoints: Record<string, pulumi.Output<Endpoint>> = {};
    for (const p of paths) {
      const probe = new ConnectivityProbe(`probe-${pathId(p)}`, {
        host: p.spec.instanceHost,
        port: p.spec.port,
        // No proxy in between: an accepted connection is the instance's own.
        settleMs: 0,
      });
      endpoints[pathId(p)] = pulumi
        .all([probe.ready, probe.reason, probe.message])
        .apply(([ready, reason, message]) => ({
          hostForConsumer: p.spec.instanceHost,
          port: p.spec.port,
          probe: { ready, reason, message },
        }));
    }
    return Promise.resolve({ endpoints: pulumi.output(endpoints) });
  };
}
