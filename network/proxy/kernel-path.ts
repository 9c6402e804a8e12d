import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { PathProblem } from "../../lib/bridge/model";
import type { ProxyExposure } from "./model/exposure";
import { consumerEndpoints } from "./model/haproxy-config";
import {
  type BackendsResult,
  connectionBackends,
  kernelConnectionKey,
  kernelPortName,
  mirroredSlices,
} from "./model/kernel-path";
import { type ConsumerEndpoint, type PortRange, type ProxyConnection, compareStrings } from "./model/types";
import { PortAllocation } from "./port-allocation";
import { checkProxyServiceArgs, consumerHost, exposedService, type ProxyServiceType } from "./proxy-service";
import { DEFAULT_PORT_RANGE } from "./tcp-proxy";

export interface KernelPathArgs {
  /** Provider of the data-service cluster, whose kube-proxy forwards. */
  provider: k8s.Provider;
  /** Namespace of the path's Service and EndpointSlices; must exist. */
  namespace: pulumi.Input<string>;
  /**
   * The connections, known when the program is built (each gets EndpointSlices of its own, and
   * a resource's existence cannot wait for an Output).
   */
  connections: readonly ProxyConnection[];
  /**
   * Each instance Service's ready endpoints by `host:port` (model/kernel-path.ts backendKey),
   * as the caller read them; connections to an IPv4 address need none.
   */
  backends?: Readonly<Record<string, BackendsResult>>;
  /** Ports handed out, one per connection. Default 30000-30999. */
  portRange?: pulumi.Input<PortRange>;
  /** Ports of the range never handed out. */
  reservedPorts?: number[];
  /** How app clusters reach the path. Default LoadBalancer. */
  serviceType?: ProxyServiceType;
  /**
   * Who may connect: the Service's source ranges and scheme. Required for NodePort and
   * LoadBalancer, as for the TcpProxy; a NodePort kernel path admits whoever reaches a node, so
   * the environment's checks allow one only when public (network/proxy/model/checks.ts).
   */
  exposure?: ProxyExposure;
  /** Host consumers dial instead of the Service's address. */
  externalHost?: pulumi.Input<string>;
  /** For NodePort: a node address app clusters reach. */
  nodeHost?: pulumi.Input<string>;
  /** Default cluster.local. */
  clusterDomain?: string;
  /** As the TcpProxy's: "leave-out" leaves connections without a port out (and lists them). */
  overflow?: "error" | "leave-out";
  /** Add pulumi.com/skipAwait to the Service (also done for every type but LoadBalancer). */
  skipAwait?: boolean;
}

/** EndpointSlices of a selector-less Service are left alone by Kubernetes' own controllers. */
const MANAGED_BY = "kernel-path.klutch.anynines.com";

/**
 * The proxy's kernel hop: one Service without selector, one port per connection, and per
 * connection EndpointSlices that name the instance's ready endpoints, so kube-proxy's DNAT on
 * the node is all that lies between consumer and instance (measured as fast as dialling the
 * instance: docs/network-paths.md). What it gives up, against the HAProxy pods: health checks
 * that steer traffic (a dead instance is forwarded to until its endpoint goes; the bridge's dial
 * through the path, ./kernel-health.ts, reports it on the path), TLS server-name routing, the log
 * per connection, and the pods' NetworkPolicy (a LoadBalancer's source ranges still hold).
 * The endpoints are the caller's to keep current: the bridge reads them before each run and
 * runs the group again when they move (network/proxy/instance-backends.ts).
 */
export class KernelPath extends pulumi.ComponentResource {
  /** Per connection id: what its XTCPConnection status reports (placed and resolved ones). */
  public readonly endpoints: pulumi.Output<Record<string, ConsumerEndpoint>>;
  /** Connection id → port. */
  public readonly assignments: pulumi.Output<Record<string, number>>;
  /** Connection ids left without a port (only with `overflow: "leave-out"`). */
  public readonly unplaced: pulumi.Output<string[]>;
  /**
   * Connection id → why it is not realised: HostUnresolved (its instance gave no endpoints) or
   * InvalidConnection (it needs SNI), as its path's status says it.
   */
  public readonly problems: Record<string, PathProblem>;
  public readonly serviceName: pulumi.Output<string>;

  constructor(name: string, args: KernelPathArgs, opts?: pulumi.ComponentResourceOptions) {
    checkArgs(name, args);
    super("klutch:network:KernelPath", name, {}, opts);
    const serviceType = args.serviceType ?? "LoadBalancer";
    const k8sOpts = { parent: this, provider: args.provider };
    const labels = {
      "app.kubernetes.io/name": "kernel-path",
      "app.kubernetes.io/instance": name,
      "app.kubernetes.io/component": "tcp-proxy",
      "app.kubernetes.io/part-of": "klutch",
      "app.kubernetes.io/managed-by": "pulumi",
    };

    const sorted = [...args.connections].sort((a, b) => compareStrings(a.id, b.id));
    const problems: Record<string, PathProblem> = {};
    const served: { connection: ProxyConnection; backends: { address: string; port: number }[] }[] = [];
    for (const connection of sorted) {
      const result = connectionBackends(connection, args.backends, args.clusterDomain);
      if ("problem" in result) problems[connection.id] = { reason: result.reason, message: result.problem };
      else served.push({ connection, backends: result.backends });
    }
    this.problems = problems;

    const ports = new PortAllocation(
      `${name}-ports`,
      {
        range: args.portRange ?? DEFAULT_PORT_RANGE,
        ids: served.map((s) => s.connection.id),
        reserved: args.reservedPorts ?? [],
        ...(args.overflow ? { overflow: args.overflow } : {}),
      },
      { parent: this },
    );
    this.assignments = ports.assignments;
    this.unplaced = ports.unplaced.apply((u) => u ?? []);

    const service = exposedService(
      name,
      {
        namespace: args.namespace,
        labels,
        serviceType,
        exposure: args.exposure,
        // Nothing to wait for but a load balancer's address: there are no pods.
        skipAwait: Boolean(args.skipAwait) || serviceType !== "LoadBalancer",
        ports: ports.assignments.apply((assigned) => servicePorts(served, assigned, serviceType)),
        // Mirrored endpoints carry no node, so "Local" would count none of them as local and
        // drop every packet; the source ranges are enforced on the load balancer's address.
        spec: serviceType === "ClusterIP" ? {} : { externalTrafficPolicy: "Cluster" },
      },
      k8sOpts,
    );

    for (const { connection, backends } of served) {
      for (const slice of mirroredSlices(backends)) {
        const suffix = `${kernelConnectionKey(connection.id)}-${slice.index}`;
        new k8s.discovery.v1.EndpointSlice(
          `${name}-${suffix}`,
          {
            metadata: {
              name: `${name}-${suffix}`,
              namespace: args.namespace,
              labels: {
                ...labels,
                "kubernetes.io/service-name": name,
                "endpointslice.kubernetes.io/managed-by": MANAGED_BY,
              },
            },
            addressType: "IPv4",
            endpoints: slice.addresses.map((address) => ({
              addresses: [address],
              conditions: { ready: true },
            })),
            ports: [{ name: kernelPortName(connection.id), port: slice.port, protocol: "TCP" }],
          },
          { ...k8sOpts, dependsOn: [service] },
        );
      }
    }
    this.serviceName = service.metadata.name;

    const host = consumerHost(name, serviceType, service, args);
    this.endpoints = pulumi.all([ports.assignments, host]).apply(([assigned, h]) =>
      consumerEndpoints(
        served.map((s) => s.connection).filter((c) => assigned[c.id] !== undefined),
        assigned,
        h,
      ),
    );

    this.registerOutputs({
      endpoints: this.endpoints,
      assignments: this.assignments,
      unplaced: this.unplaced,
      problems: this.problems,
      serviceName: this.serviceName,
    });
  }
}

function servicePorts(
  served: readonly { connection: ProxyConnection; backends: { port: number }[] }[],
  assigned: Readonly<Record<string, number>>,
  serviceType: ProxyServiceType,
): k8s.types.input.core.v1.ServicePort[] {
  const list = served.flatMap(({ connection, backends }) => {
    const port = assigned[connection.id];
    if (port === undefined) return [];
    return [
      {
        name: kernelPortName(connection.id),
        port,
        // Informational: a Service without selector forwards to its EndpointSlices' ports.
        targetPort: backends[0]?.port ?? port,
        protocol: "TCP",
        // The same number on the node, so NodePort consumers use the allocated port.
        ...(serviceType === "NodePort" ? { nodePort: port } : {}),
      },
    ];
  });
  // A Service needs a port; with no connection yet it has one that nothing serves.
  return list.length > 0 ? list : [{ name: "none", port: 9, targetPort: 9, protocol: "TCP" }];
}

function checkArgs(name: string, args: KernelPathArgs): void {
  checkProxyServiceArgs("KernelPath", name, args);
  const ids = new Set<string>();
  for (const c of args.connections) {
    if (ids.has(c.id)) throw new Error(`KernelPath ${name}: connection id "${c.id}" appears twice`);
    ids.add(c.id);
  }
}
