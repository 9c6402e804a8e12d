import { DEFAULT_HAPROXY_IMAGE } from "./model/images";
import { createHash } from "node:crypto";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import {
  DEFAULT_HEALTH_PORT,
  DEFAULT_STATS_PORT,
  HEALTH_PATH,
  HaproxyOptions,
  assertValidConnections,
  connectionProblems,
  consumerEndpoints,
  renderHaproxyConfig,
} from "./model/haproxy-config";
import { haproxyOptionsFor, profileProblem, proxyResources } from "./model/profile";
import {
  ConnectionEnhancement,
  ConsumerEndpoint,
  PortRange,
  ProxyConnection,
  listenerKey,
  listenerKeys,
} from "./model/types";
import { PortAllocation } from "./port-allocation";
import { ServiceListeners } from "./service-listeners";
import {
  CLUSTER_ONLY,
  SKIP_AWAIT,
  checkProxyServiceArgs,
  consumerHost,
  exposedService,
  type ProxyServiceType,
} from "./proxy-service";
import { type ProxyExposure, ingressRule } from "./model/exposure";

/** A ClusterIP proxy's exposure: reachable from the data-service cluster's own pods only. */

export type { ProxyServiceType } from "./proxy-service";

/** A connection as the component takes it; host and port may be Outputs (e.g. from a claim). */
export interface TcpProxyConnectionArgs {
  id: string;
  instanceHost: pulumi.Input<string>;
  port: pulumi.Input<number>;
  enhancements?: pulumi.Input<readonly ConnectionEnhancement[]>;
}

export interface TcpProxyArgs {
  /** Provider of the cluster the proxy runs in (one that reaches the data-service instances). */
  provider: k8s.Provider;
  /** Namespace of the proxy; must exist. */
  namespace: pulumi.Input<string>;
  connections: pulumi.Input<pulumi.Input<TcpProxyConnectionArgs>[]>;
  /** Ports handed out, one per connection (plus one shared SNI port). Default 30000-30999. */
  portRange?: pulumi.Input<PortRange>;
  /** Ports of the range never handed out (besides the pods' own stats and health ports). */
  reservedPorts?: number[];
  /** How app clusters reach the proxy. Default LoadBalancer. */
  serviceType?: ProxyServiceType;
  /**
   * Who may connect (see exposure.ts): the Service's source ranges and scheme and the pods'
   * NetworkPolicy. Required for NodePort and LoadBalancer, so a proxy is never an open relay
   * by omission; `{ public: true, sourceRanges: ["0.0.0.0/0"] }` opens it on purpose.
   */
  exposure?: ProxyExposure;
  /** Default DEFAULT_HAPROXY_IMAGE (pinned). */
  image?: string;
  /** Default 2, so one pod can roll or fail without cutting every connection. */
  replicas?: pulumi.Input<number>;
  /** Add pulumi.com/skipAwait to the Deployment and Service (local clusters run no kubelet). */
  skipAwait?: boolean;
  /**
   * Prove the listeners in service with a ServiceListeners resource (service-listeners.ts)
   * instead of pulumi-kubernetes' Service await, which sleeps 10 s after every change of the
   * Service's Endpoints. Needs the cluster's kubeconfig. Not used for LoadBalancer (that
   * await also waits for the balancer's address, which the endpoints report) or with skipAwait.
   */
  listenerCheck?: { kubeconfig: pulumi.Input<string> };
  /** Host consumers dial instead of the Service's address (e.g. a DNS name of the load balancer). */
  externalHost?: pulumi.Input<string>;
  /** For NodePort: a node address app clusters reach. */
  nodeHost?: pulumi.Input<string>;
  /** Default cluster.local. */
  clusterDomain?: string;
  /**
   * "leave-out" (the Crossplane bridge): when the port range is full, the connections that do
   * not fit are left out of the proxy and listed in `unplaced`, and the others keep working;
   * default "error": the update fails.
   */
  overflow?: "error" | "leave-out";
  /**
   * Give each proxy pod this many whole CPUs of its own: requests equal limits (Guaranteed
   * QoS, so a kubelet with the static CPU manager policy pins the container to exclusive
   * cores), one HAProxy thread per CPU, and busy polling. For latency-sensitive paths; the
   * benchmark (test/bench/proxy.ts) measures what it buys. Default: shared CPUs, 2 threads.
   */
  dedicatedCpus?: number;
  /**
   * Pods (by label, in any namespace) that may read the health frontend's backend pages
   * (haproxy-config.ts BACKENDS_PATH): the Crossplane bridge's, which say on each path whether
   * it reaches its instance (path-health.ts). The NetworkPolicy admits them to the health port only.
   */
  healthReaders?: Record<string, string>;
  /** Health-check user, timeouts, check timing, nbthread (default 2); ports and bind address are the component's. */
  haproxy?: Omit<HaproxyOptions, "bindAddress" | "statsPort" | "healthPort">;
}

export { DEFAULT_HAPROXY_IMAGE };
export const DEFAULT_PORT_RANGE: PortRange = { from: 30000, to: 30999 };
const CONFIG_DIR = "/usr/local/etc/haproxy";
/** The official image's `haproxy` user; numeric so the kubelet can check runAsNonRoot. */
const HAPROXY_UID = 99;
/**
 * The default network path of XTCPConnections: HAProxy in TCP mode, one port per
 * connection (SNI-routed connections share one), behind one Service. Ports come from the
 * PortAllocation resource, so they survive every later run; the config comes from the pure
 * renderer, and its checksum on the pod template rolls the pods when it changes.
 */
export class TcpProxy extends pulumi.ComponentResource {
  /** Per connection id: what its XTCPConnection status reports. */
  public readonly endpoints: pulumi.Output<Record<string, ConsumerEndpoint>>;
  /** Listener key → port. */
  public readonly assignments: pulumi.Output<Record<string, number>>;
  /** The rendered haproxy.cfg. */
  public readonly config: pulumi.Output<string>;
  /** Listener keys left without a port (only with `overflow: "leave-out"`). */
  public readonly unplaced: pulumi.Output<string[]>;
  public readonly serviceName: pulumi.Output<string>;

  constructor(name: string, args: TcpProxyArgs, opts?: pulumi.ComponentResourceOptions) {
    // Checked before super(): bad input registers nothing, not even this component.
    checkArgs(name, args);
    super("klutch:network:TcpProxy", name, {}, opts);

    const serviceType = args.serviceType ?? "LoadBalancer";
    const k8sOpts = { parent: this, provider: args.provider };
    const proveListeners =
      args.listenerCheck !== undefined && serviceType !== "LoadBalancer" && !args.skipAwait;
    const labels = {
      "app.kubernetes.io/name": "haproxy",
      "app.kubernetes.io/instance": name,
      "app.kubernetes.io/component": "tcp-proxy",
      "app.kubernetes.io/part-of": "klutch",
      "app.kubernetes.io/managed-by": "pulumi",
    };
    const selector = { "app.kubernetes.io/name": "haproxy", "app.kubernetes.io/instance": name };

    const connections = pulumi.output(args.connections).apply((list) => {
      const plain = list as ProxyConnection[];
      assertValidConnections(plain);
      return plain;
    });
    const ports = new PortAllocation(
      `${name}-ports`,
      {
        range: args.portRange ?? DEFAULT_PORT_RANGE,
        ids: connections.apply(listenerKeys),
        reserved: [DEFAULT_STATS_PORT, DEFAULT_HEALTH_PORT, ...(args.reservedPorts ?? [])],
        ...(args.overflow ? { overflow: args.overflow } : {}),
      },
      { parent: this },
    );
    this.assignments = ports.assignments;
    this.unplaced = ports.unplaced.apply((u) => u ?? []);
    // Only connections with a port are served (all of them unless overflow is "leave-out").
    const placed = pulumi
      .all([connections, ports.assignments])
      .apply(([list, assignments]) => list.filter((c) => assignments[listenerKey(c)] !== undefined));
    this.config = pulumi
      .all([placed, ports.assignments])
      .apply(([list, assignments]) =>
        renderHaproxyConfig(list, assignments, haproxyOptionsFor(args.dedicatedCpus, args.haproxy)),
      );
    const checksum = this.config.apply((c) => createHash("sha256").update(c).digest("hex"));
    const listenerPorts = ports.assignments.apply((a) =>
      [...new Set(Object.values(a))].sort((x, y) => x - y),
    );

    // Auto-named: a config change replaces the ConfigMap under a new name, and the
    // Deployment's reference to it (plus the checksum) rolls the pods onto it.
    const configMap = new k8s.core.v1.ConfigMap(
      `${name}-config`,
      { metadata: { namespace: args.namespace, labels }, data: { "haproxy.cfg": this.config } },
      k8sOpts,
    );

    const deployment = new k8s.apps.v1.Deployment(
      `${name}-deployment`,
      {
        metadata: {
          name,
          namespace: args.namespace,
          labels,
          annotations: args.skipAwait ? SKIP_AWAIT : undefined,
        },
        spec: {
          replicas: args.replicas ?? 2,
          selector: { matchLabels: selector },
          // Every new pod at once, none of the old ones gone before the new ones are Ready: a
          // connection added to the group waits for one pod start, not one per replica.
          strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: "100%" } },
          template: {
            metadata: { labels, annotations: { "checksum/config": checksum } },
            spec: podSpec(args, configMap, listenerPorts, selector),
          },
        },
      },
      k8sOpts,
    );

    const exposure = args.exposure ?? CLUSTER_ONLY;
    const service = exposedService(
      name,
      {
        namespace: args.namespace,
        labels,
        serviceType,
        exposure,
        skipAwait: Boolean(args.skipAwait) || proveListeners,
        selector,
        ports: listenerPorts.apply((list) => servicePorts(list, serviceType)),
      },
      k8sOpts,
    );
    new k8s.networking.v1.NetworkPolicy(
      `${name}-ingress`,
      {
        metadata: { name, namespace: args.namespace, labels },
        spec: {
          podSelector: { matchLabels: selector },
          policyTypes: ["Ingress"],
          ingress: [
            listenerPorts.apply((list) => ingressRule(exposure, serviceType, list)),
            ...(args.healthReaders
              ? [
                  {
                    from: [{ namespaceSelector: {}, podSelector: { matchLabels: args.healthReaders } }],
                    ports: [{ protocol: "TCP", port: DEFAULT_HEALTH_PORT }],
                  },
                ]
              : []),
          ],
        },
      },
      k8sOpts,
    );
    this.serviceName = service.metadata.name;
    const listeners =
      proveListeners && args.listenerCheck
        ? new ServiceListeners(
            `${name}-listeners`,
            {
              kubeconfig: args.listenerCheck.kubeconfig,
              namespace: args.namespace,
              service: service.metadata.name,
              selector,
              checksum,
              ports: listenerPorts,
            },
            { parent: this, dependsOn: [deployment, service] },
          )
        : undefined;

    const host = consumerHost(name, serviceType, service, args);
    // With a ServiceListeners, a connection is reported only once its listener is in service.
    this.endpoints = pulumi
      .all([placed, ports.assignments, host, listeners?.pods ?? []])
      .apply(([list, assignments, h]) => consumerEndpoints(list, assignments, h));

    this.registerOutputs({
      endpoints: this.endpoints,
      assignments: this.assignments,
      config: this.config,
      serviceName: this.serviceName,
      unplaced: this.unplaced,
    });
  }
}

/** Checks what is known before any Output resolves, so mistakes fail at once and by name. */
function checkArgs(name: string, args: TcpProxyArgs): void {
  checkProxyServiceArgs("TcpProxy", name, args);
  // Plain connections are checked now; ones built from Outputs when they resolve.
  const known = (v: unknown) => !pulumi.Output.isInstance(v) && !(v instanceof Promise);
  if (Array.isArray(args.connections)) {
    const list: unknown[] = args.connections;
    if (list.every((c) => known(c) && typeof c === "object" && c !== null && Object.values(c).every(known))) {
      const problems = connectionProblems(list as ProxyConnection[]);
      if (problems.length > 0)
        throw new Error(`TcpProxy ${name}: invalid connections:\n  - ${problems.join("\n  - ")}`);
    }
  }
  const profile = profileProblem(args.dedicatedCpus, args.haproxy);
  if (profile) throw new Error(`TcpProxy ${name}: ${profile}`);
}

function servicePorts(ports: number[], serviceType: ProxyServiceType): k8s.types.input.core.v1.ServicePort[] {
  // A Service needs at least one port; with no connections yet, expose the health endpoint.
  if (ports.length === 0) {
    return [{ name: "health", port: DEFAULT_HEALTH_PORT, targetPort: DEFAULT_HEALTH_PORT, protocol: "TCP" }];
  }
  return ports.map((port) => ({
    name: `tcp-${port}`,
    port,
    targetPort: port,
    protocol: "TCP",
    // Same number on the node as on the Service, so NodePort consumers use the allocated port.
    ...(serviceType === "NodePort" ? { nodePort: port } : {}),
  }));
}

function podSpec(
  args: TcpProxyArgs,
  configMap: k8s.core.v1.ConfigMap,
  ports: pulumi.Output<number[]>,
  selector: Record<string, string>,
): k8s.types.input.core.v1.PodSpec {
  const healthProbe = { httpGet: { path: HEALTH_PATH, port: DEFAULT_HEALTH_PORT } };
  return {
    automountServiceAccountToken: false,
    securityContext: {
      runAsNonRoot: true,
      runAsUser: HAPROXY_UID,
      runAsGroup: HAPROXY_UID,
      seccompProfile: { type: "RuntimeDefault" },
    },
    // Prefer one replica per node, so losing a node leaves a proxy running.
    affinity: {
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          {
            weight: 100,
            podAffinityTerm: {
              topologyKey: "kubernetes.io/hostname",
              labelSelector: { matchLabels: selector },
            },
          },
        ],
      },
    },
    containers: [
      {
        name: "haproxy",
        image: args.image ?? DEFAULT_HAPROXY_IMAGE,
        // -db: stay in the foreground and log to stdout; the kubelet is the supervisor.
        command: ["haproxy"],
        args: ["-f", `${CONFIG_DIR}/haproxy.cfg`, "-db"],
        ports: ports.apply((list) => [
          ...list.map((p) => ({ name: `tcp-${p}`, containerPort: p, protocol: "TCP" })),
          { name: "health", containerPort: DEFAULT_HEALTH_PORT, protocol: "TCP" },
        ]),
        // Probed every second, as a rollout waits for it (HAProxy's health page is cheap);
        // 5 s of failures before a pod leaves the Service's endpoints.
        readinessProbe: { ...healthProbe, periodSeconds: 1, failureThreshold: 5 },
        livenessProbe: { ...healthProbe, initialDelaySeconds: 10, periodSeconds: 10, failureThreshold: 3 },
        resources: proxyResources(args.dedicatedCpus),
        securityContext: {
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ["ALL"] },
        },
        volumeMounts: [{ name: "config", mountPath: CONFIG_DIR, readOnly: true }],
      },
    ],
    volumes: [{ name: "config", configMap: { name: configMap.metadata.name } }],
  };
}
