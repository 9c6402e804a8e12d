import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { exposureArgProblem, serviceExposure } from "../contract/exposure";
import type { ProxyExposure } from "./model/exposure";
import { proxyHost } from "./model/haproxy-config";
import { portRangeProblem } from "./model/port-planner";
import type { PortRange } from "./model/types";

/** How app clusters reach a proxy's Service (the TcpProxy's or the KernelPath's). */
export type ProxyServiceType = "ClusterIP" | "NodePort" | "LoadBalancer";

const SERVICE_TYPES: readonly ProxyServiceType[] = ["ClusterIP", "NodePort", "LoadBalancer"];
const DNS_1035 = /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * The checks a proxy's Service arguments share, made before any Output resolves so a mistake
 * fails at once, by name, and before anything is registered: the component's name (it names
 * the Service), its type, its exposure and its port range.
 */
export function checkProxyServiceArgs(
  component: string,
  name: string,
  args: { serviceType?: ProxyServiceType; exposure?: ProxyExposure; portRange?: pulumi.Input<PortRange> },
): void {
  if (!DNS_1035.test(name)) {
    throw new Error(
      `${component} name "${name}" names the Service, so it must be a DNS-1035 label: lowercase letters, digits and '-', starting with a letter, at most 63 characters`,
    );
  }
  if (args.serviceType !== undefined && !SERVICE_TYPES.includes(args.serviceType)) {
    throw new Error(
      `${component} ${name}: serviceType "${String(args.serviceType)}" must be one of ${SERVICE_TYPES.join(", ")}`,
    );
  }
  const serviceType = args.serviceType ?? "LoadBalancer";
  const exposureProblem = exposureArgProblem(`${component} ${name}`, "exposure", serviceType, args.exposure);
  if (exposureProblem) throw new Error(exposureProblem);
  if (args.portRange !== undefined && !pulumi.Output.isInstance(args.portRange)) {
    const problem = portRangeProblem(args.portRange, "portRange");
    if (problem) throw new Error(`${component} ${name}: ${problem}`);
  }
}

/**
 * The host consumers dial: `externalHost` when given, else a load balancer's address, a
 * NodePort's node, or the Service's DNS name (model/haproxy-config.ts proxyHost).
 */
export function consumerHost(
  name: string,
  serviceType: ProxyServiceType,
  service: k8s.core.v1.Service,
  args: {
    namespace: pulumi.Input<string>;
    externalHost?: pulumi.Input<string>;
    nodeHost?: pulumi.Input<string>;
    clusterDomain?: string;
  },
): pulumi.Output<string> {
  return pulumi
    .all([
      pulumi.output(args.externalHost),
      pulumi.output(args.nodeHost),
      service.status,
      pulumi.output(args.namespace),
    ])
    .apply(([externalHost, nodeHost, status, namespace]) => {
      const ingress = serviceType === "LoadBalancer" ? status?.loadBalancer?.ingress?.[0] : undefined;
      return proxyHost({
        externalHost,
        loadBalancerHost: ingress?.ip || ingress?.hostname,
        nodeHost: serviceType === "NodePort" ? nodeHost : undefined,
        serviceName: name,
        namespace,
        clusterDomain: args.clusterDomain,
      });
    });
}

/**
 * Tells pulumi-kubernetes not to await an object's readiness: a local cluster runs no kubelet
 * to make it ready, and a ServiceListeners resource proves the Service's listeners instead.
 */
export const SKIP_AWAIT = { "pulumi.com/skipAwait": "true" };

/** A proxy exposed to nobody outside the cluster: the default of both proxies' Services. */
export const CLUSTER_ONLY: ProxyExposure = { sourceRanges: [], internal: true, public: false };

/**
 * The Service consumers dial (the TcpProxy's, in front of its pods, or the KernelPath's, in
 * front of mirrored endpoints): its type, its exposure turned into the Service's source ranges,
 * load-balancer annotations and traffic policy, and `pulumi.com/skipAwait` when there is
 * nothing the Service itself can be awaited for.
 */
export function exposedService(
  name: string,
  args: {
    namespace: pulumi.Input<string>;
    labels: Record<string, string>;
    serviceType: ProxyServiceType;
    exposure: ProxyExposure | undefined;
    skipAwait: boolean;
    selector?: Record<string, string>;
    ports: pulumi.Input<pulumi.Input<k8s.types.input.core.v1.ServicePort>[]>;
    /** Fields the exposure does not decide (they win over it). */
    spec?: Omit<k8s.types.input.core.v1.ServiceSpec, "type" | "selector" | "ports">;
  },
  opts: pulumi.CustomResourceOptions,
): k8s.core.v1.Service {
  const { annotations, ...exposureSpec } = serviceExposure(args.exposure ?? CLUSTER_ONLY, args.serviceType);
  return new k8s.core.v1.Service(
    `${name}-service`,
    {
      metadata: {
        name,
        namespace: args.namespace,
        labels: args.labels,
        annotations: { ...annotations, ...(args.skipAwait ? SKIP_AWAIT : {}) },
      },
      spec: {
        type: args.serviceType,
        ...(args.selector ? { selector: args.selector } : {}),
        ports: args.ports,
        ...exposureSpec,
        ...args.spec,
      },
    },
    opts,
  );
}
