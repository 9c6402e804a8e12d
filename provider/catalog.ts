import type { ComponentSpec, ObjectType, PackageSpec, Prop } from "./spec/schema-model";
import { KUBECONFIG, bool, int, list, map, ref, str } from "./spec/props";
import { bindComponents, bindTypes } from "./spec/bind";
import { cloudComponents, cloudTypes } from "./spec/cloud";
import { crossplaneComponents, crossplaneTypes } from "./spec/crossplane";
import { environmentComponents, environmentTypes } from "./spec/environment";
import { wireguardComponents, wireguardTypes } from "./spec/wireguard";

/**
 * The components the `klutch` provider serves, described once: schema.json is generated from
 * this (provider/generate-schema.ts) and the provider checks its inputs against it
 * (provider/provider.ts). The construct side (provider/constructors.ts) maps each to the
 * TypeScript component of the same token.
 */

const types: Record<string, ObjectType> = {
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
  "klutch:network:PortRange": {
    description: "Inclusive range of ports the proxy hands out.",
    properties: { from: int("First port."), to: int("Last port.") },
    required: ["from", "to"],
  },
  "klutch:network:Exposure": {
    description:
      "Who may reach a NodePort or LoadBalancer Service in front of the data-service network (a proxy, a WireGuard gateway).",
    properties: {
      sourceRanges: list(str("CIDR"), "Source CIDRs admitted; 0.0.0.0/0 only with public: true."),
      internal: bool("Ask the cloud for an internal (private) load balancer."),
      public: bool("Open to the internet on purpose."),
    },
    required: ["sourceRanges", "internal", "public"],
  },
  "klutch:network:ConsumerEndpoint": {
    description: "Where a consumer dials a connection (its XTCPConnection status).",
    properties: { hostForConsumer: str("Host consumers dial."), port: int("Port consumers dial.") },
    required: ["hostForConsumer", "port"],
  },
  "klutch:bind:PermissionClaim": {
    description: "Objects that travel with a bound API (an APIServiceExportTemplate permissionClaim).",
    properties: {
      group: str('API group ("" for the core group).'),
      resource: str("Plural resource, e.g. secrets."),
      version: str("API version; default v1."),
      owner: str("Whose objects are synced.", { enum: ["Provider", "Consumer"] }),
    },
    required: ["group", "resource"],
  },
};

const clusterOutputs: Record<string, Prop> = {
  clusterName: str("The cluster's name."),
  kubeconfig: str("The cluster's kubeconfig (files it references inlined). A secret.", { secret: true }),
};

const components: ComponentSpec[] = [
  {
    token: "klutch:cluster:LocalCluster",
    description:
      "A cluster run on this machine by `npm run clusters -- up`, adopted through its kubeconfig file (starting and stopping it is the command's job).",
    inputs: {
      clusterName: str("The cluster's name.", { plain: true }),
      kubeconfigPath: str(
        "The kubeconfig file `npm run clusters -- up` wrote (`.klutch/local/<cluster>/kubeconfig`).",
        {
          plain: true,
        },
      ),
    },
    requiredInputs: ["clusterName", "kubeconfigPath"],
    outputs: clusterOutputs,
    requiredOutputs: ["clusterName", "kubeconfig"],
  },
  {
    token: "klutch:cluster:ExistingCluster",
    description: "A cluster someone else runs, reached through a kubeconfig file.",
    inputs: {
      clusterName: str("The cluster's name.", { plain: true }),
      kubeconfigPath: str("Path of the cluster's kubeconfig file.", { plain: true }),
      context: str("Context in that file; its current-context when omitted."),
    },
    requiredInputs: ["clusterName", "kubeconfigPath"],
    outputs: clusterOutputs,
    requiredOutputs: ["clusterName", "kubeconfig"],
  },
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
  {
    token: "klutch:bind:ExportedApi",
    description:
      "One data-service API offered for binding: an APIServiceExportTemplate on the control plane selecting the API's resource and the objects that travel with it.",
    inputs: {
      kubeconfig: KUBECONFIG,
      namespace: str("Where the backend looks for templates (Klutch uses crossplane-system)."),
      group: str("API group, e.g. anynines.com.", { plain: true }),
      version: str("API version, e.g. v1.", { plain: true }),
      resource: str("Plural lowercase resource, e.g. postgresqlinstances.", { plain: true }),
      kind: str("Kind, e.g. PostgresqlInstance.", { plain: true }),
      permissionClaims: list(
        ref("klutch:bind:PermissionClaim", "claim"),
        "Objects that travel with the API.",
        true,
      ),
      labels: { ...map(str("value"), "Labels of the template."), plain: true },
    },
    requiredInputs: ["kubeconfig", "namespace", "group", "version", "resource"],
    outputs: { templateName: str("The APIServiceExportTemplate's name.") },
    requiredOutputs: ["templateName"],
  },
];

export const KLUTCH_PACKAGE: PackageSpec = {
  name: "klutch",
  version: "0.1.0",
  description:
    "Klutch (Crossplane + klutch-bind multi-cluster data services) components: the whole environment, clusters, Crossplane, the bind backend, OIDC, exported APIs, app cluster bindings and the network paths (TCP proxy, WireGuard, AWS VPC peering, OpenStack routing).",
  types: {
    ...types,
    ...wireguardTypes,
    ...bindTypes,
    ...crossplaneTypes,
    ...cloudTypes,
    ...environmentTypes,
  },
  components: [
    ...components,
    ...wireguardComponents,
    ...bindComponents,
    ...crossplaneComponents,
    ...cloudComponents,
    ...environmentComponents,
  ],
};
