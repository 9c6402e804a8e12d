import * as k8s from "@kubernetes/client-node";
import type { HealthReader, HealthReaderOptions } from "../contract/implementation";
import { gatewaySelector, judgeGateway } from "./model/gateway-health";
import { gatewayOfFlows } from "./model/render-k8s";
import { wireguardSettings } from "./model/settings";
import { pathId } from "../../lib/bridge/model";
import { dataPlaneInstances, unservedOf } from "../shared/instance-reads";
import { servicesNamed, withUnservedBut } from "../contract/instance-service";
import { localWireguardHealth } from "./local/path-health";

/**
 * WireGuard's health reader on a cluster (its spec's `pulumi.health`): the gateway's pods in the
 * namespace of its flows ConfigMap, listed as the data-plane identity may (pods in its own
 * namespace, lib/bridge/rbac.ts dataPlaneRules) from the API server's watch cache
 * (resourceVersion "0", no etcd read), judged by model/gateway-health.ts; and each path's
 * instance Service, as the proxy's reader reads it (network/shared/instance-reads.ts, the rights
 * lib/bridge/rbac.ts dataPlaneInstanceRules grants): the gateway forwards to the Service's
 * ClusterIP, which kube-proxy refuses while the Service has no ready endpoint, so such a path is
 * `InstanceUnreachable`, naming the Service, as is one whose Service is gone. A gateway with no
 * pod serving outranks it. On this machine (the local target): the processes,
 * local/path-health.ts. Not on a cluster without kubelets.
 */
export function wireguardHealthReader(opts: HealthReaderOptions): HealthReader {
  let core: k8s.CoreV1Api | undefined;
  if (opts.kubeconfig) {
    const kc = new k8s.KubeConfig();
    kc.loadFromString(opts.kubeconfig);
    core = kc.makeApiClient(k8s.CoreV1Api);
  }
  const instances = opts.kubeconfig
    ? dataPlaneInstances(opts.kubeconfig, { fromWatchCache: true })
    : undefined;
  const gatewayOf = (settings: unknown) => {
    const parsed = wireguardSettings.safeParse(settings);
    const names = parsed.success ? gatewayOfFlows(parsed.data.flows.name) : undefined;
    return parsed.success && names
      ? {
          namespace: parsed.data.flows.namespace,
          name: names.gateway,
          selector: gatewaySelector(names.tunnel),
        }
      : undefined;
  };
  return {
    reads: (_key, target) =>
      target.kind === "local" ||
      (core !== undefined &&
        target.kind === "kubernetes" &&
        !target.skipAwait &&
        gatewayOf(target.settings) !== undefined),
    read: async (key, target, live) => {
      if (target.kind === "local") return localWireguardHealth(key, target.stateDir, live);
      const gateway = target.kind === "kubernetes" ? gatewayOf(target.settings) : undefined;
      if (!core || !gateway) return {};
      const services = servicesNamed(
        live.map((p) => ({ id: pathId(p), host: p.spec.instanceHost, port: p.spec.port })),
      );
      const [pods, unserved] = await Promise.all([
        core.listNamespacedPod({
          namespace: gateway.namespace,
          labelSelector: gateway.selector,
          resourceVersion: "0",
        }),
        instances ? unservedOf(instances, services, { missing: true }) : {},
      ]);
      return withUnservedBut(judgeGateway(gateway, pods.items, live), unserved, "GatewayUnavailable");
    },
  };
}
