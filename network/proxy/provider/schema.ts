import type { ComponentSpec, ObjectType, Prop } from "../../../providers/kit/schema-model";
import {
  CONNECTOR_EXPOSURE_FIELDS,
  KUBECONFIG,
  bool,
  int,
  list,
  map,
  ref,
  str,
} from "../../../providers/kit/props";

/**
 * The TCP proxy as the klutch provider serves it: on a cluster (tcp-proxy.ts) and on this
 * machine (local-tcp-proxy.ts). The types it shares with other paths (PortRange, Exposure,
 * ConsumerEndpoint) are programs/klutch-provider/catalog.ts's.
 */
export const proxyTypes: Record<string, ObjectType> = {
  "klutch:network:TcpConnection": {
    description: "One XTCPConnection as the proxy sees it (spec.instanceHost, spec.port, spec.enhancements).",
    properties: {
      id: str(
        "`namespace/name` of a TCPConnection claim, or `name` of a cluster-scoped XTCPConnection; names the HAProxy section.",
      ),
      instanceHost: str("DNS name or IP address of the data-service instance."),
      port: int("Port of the data-service instance."),
      enhancements: list(
        map(str("value"), "entry"),
        "spec.enhancements: {InstanceType: PostgreSQL} turns on a PostgreSQL health check; {ConnectionType: tlsSNI, serverName} shares the SNI port.",
      ),
    },
    required: ["id", "instanceHost", "port"],
  },
};

export const proxyComponents: ComponentSpec[] = [
  {
    token: "klutch:network:TcpProxy",
    description:
      "The default network path of XTCPConnections: HAProxy in TCP mode on a cluster, one port per connection (SNI-routed ones share one), behind one Service; ports survive every later run.",
    inputs: {
      kubeconfig: KUBECONFIG,
      namespace: str("Namespace of the proxy; must exist."),
      connections: list(ref("klutch:network:TcpConnection", "connection"), "The connections to serve."),
      portRange: ref(
        "klutch:network:PortRange",
        "Ports handed out, one per connection (plus one shared SNI port). Default 30000-30999.",
      ),
      serviceType: str("How app clusters reach the proxy. Default LoadBalancer.", {
        plain: true,
        enum: ["ClusterIP", "NodePort", "LoadBalancer"],
      }),
      exposure: ref(
        "klutch:network:Exposure",
        "Who may connect; required for NodePort and LoadBalancer, so a proxy is never an open relay by omission.",
        true,
      ),
      image: str("HAProxy image. Default docker.io/library/haproxy:2.6.12.", { plain: true }),
      replicas: int("Proxy pods. Default 2."),
      skipAwait: bool("Do not wait for the Deployment and Service (clusters without a kubelet).", true),
      externalHost: str("Host consumers dial instead of the Service's address."),
      nodeHost: str("For NodePort: a node address app clusters reach."),
      clusterDomain: str("Default cluster.local.", { plain: true }),
      overflow: str(
        '"leave-out": connections that do not fit the port range are left out (listed in unplaced). Default "error".',
        {
          plain: true,
          enum: ["error", "leave-out"],
        },
      ),
      dedicatedCpus: int(
        "Whole CPUs of its own per proxy pod (Guaranteed QoS, one HAProxy thread each).",
        true,
      ),
    },
    requiredInputs: ["kubeconfig", "namespace", "connections"],
    outputs: {
      endpoints: map(
        ref("klutch:network:ConsumerEndpoint", "endpoint"),
        "Per connection id: what its XTCPConnection status reports.",
      ),
      assignments: map(int("port"), "Listener key to port."),
      config: str("The rendered haproxy.cfg."),
      unplaced: list(str("listener key"), "Listener keys left without a port (overflow leave-out)."),
      serviceName: str("The proxy's Service."),
    },
    requiredOutputs: ["endpoints", "assignments", "config", "unplaced", "serviceName"],
  },
  {
    token: "klutch:network:LocalTcpProxy",
    description:
      "The TCP proxy path realised on this machine (the bridge's local target): the same rendered HAProxy configuration run as a process, for clusters without a kubelet.",
    inputs: {
      connections: list(ref("klutch:network:TcpConnection", "connection"), "The connections to serve.", true),
      portRange: ref(
        "klutch:network:PortRange",
        "Ports handed out: one per listener plus the proxy's stats and health ports.",
        true,
      ),
      bindAddress: str("Address HAProxy listens on and consumers dial. Default 127.0.0.1.", { plain: true }),
      stateDir: str("Directory of the proxy's haproxy.cfg and pid file (one per proxy).", { plain: true }),
    },
    requiredInputs: ["connections", "portRange", "stateDir"],
    outputs: {
      endpoints: map(
        ref("klutch:network:ConsumerEndpoint", "endpoint"),
        "Per connection id: the host and port consumers dial.",
      ),
      config: str("The rendered haproxy.cfg."),
      unplaced: list(str("listener key"), "Listener keys left without a port (the range is full)."),
    },
    requiredOutputs: ["endpoints", "config", "unplaced"],
  },
];

/** Its `networkConnector` settings (model/config.ts), as the environment's NetworkConnector type shows them. */
export const proxyConnectorFields: Record<string, Prop> = {
  serviceType: str("how it is exposed. Default LoadBalancer.", {
    enum: ["ClusterIP", "NodePort", "LoadBalancer"],
  }),
  hop: str("HAProxy pods, or kube-proxy alone (kernel). Default haproxy.", { enum: ["haproxy", "kernel"] }),
  portRange: ref("klutch:network:PortRange", "ports handed out. Default 30000-30999."),
  dedicatedCpus: int("whole CPUs per pod."),
  ...CONNECTOR_EXPOSURE_FIELDS,
};
