import type { ComponentSpec, ObjectType, Prop } from "../../../providers/kit/schema-model";
import {
  CONNECTOR_DATA_SERVICE_PORTS,
  CONNECTOR_EXPOSURE_FIELDS,
  KUBECONFIG,
  SKIP_AWAIT,
  bool,
  int,
  list,
  map,
  ref,
  secret,
  str,
} from "../../../providers/kit/props";

/** network/wireguard/wireguard-tunnel.ts as the provider serves it. */

export const wireguardTypes: Record<string, ObjectType> = {
  "klutch:network:WireguardAppCluster": {
    description: "An app cluster that gets a WireGuard client (a Deployment and one Service per connection).",
    properties: {
      name: str(
        'The app cluster\'s name (a DNS-1123 label, not "gateway"); names its resources and its tunnel address.',
      ),
      kubeconfig: KUBECONFIG,
      namespace: str("Namespace of the client; must exist. Default klutch-wireguard."),
    },
    required: ["name", "kubeconfig"],
  },
  "klutch:network:WireguardConnection": {
    description: "One XTCPConnection served through the tunnel.",
    properties: {
      name: str("Unique name (the XTCPConnection's), a DNS-1123 label; names the consumer Service."),
      appCluster: str("The app cluster (one of appClusters[].name) that consumes it."),
      instanceHost: str("spec.instanceHost: the data-service host, an IPv4 address."),
      port: int("spec.port."),
      enhancements: list(
        map(str("value"), "entry"),
        "spec.enhancements; a {ConnectionType: wireguardVPN} entry may set vpnEndpoint and clientIP.",
      ),
    },
    required: ["name", "appCluster", "instanceHost", "port"],
  },
  "klutch:network:ConfigMapRef": {
    description: "A ConfigMap by namespace and name.",
    properties: { namespace: str("Its namespace."), name: str("Its name.") },
    required: ["namespace", "name"],
  },
  "klutch:network:WireguardBridgeSettings": {
    description:
      "What the Crossplane bridge needs to realise one app cluster's WireGuard connections (its settings ConfigMap's `wireguard`).",
    properties: {
      tunnelCidr: str("The tunnel's block."),
      clientAddress: str("The client's tunnel address: its flows' source."),
      flows: ref("klutch:network:ConfigMapRef", "The gateway's flows ConfigMap the bridge publishes in."),
      clientHost: str("The client's headless Service: every connection's hostForConsumer."),
    },
    required: ["tunnelCidr", "clientAddress", "flows", "clientHost"],
  },
  "klutch:network:NamedCidr": {
    description: "A CIDR with the name problems use for it, e.g. `app-1 podCidr`.",
    properties: { name: str("What the CIDR is."), cidr: str("The CIDR, e.g. 10.0.0.0/16.") },
    required: ["name", "cidr"],
  },
};

const ENDPOINT = ref("klutch:network:ConsumerEndpoint", "endpoint");

export const wireguardComponents: ComponentSpec[] = [
  {
    token: "klutch:network:WireguardTunnel",
    description:
      "The WireGuard network path of XTCPConnections: a gateway in the data-service network (a pod, or cloud-init for a VM), one client per app cluster and one consumer Service per connection; key pairs are made here and the private keys stay secrets.",
    inputs: {
      gatewayKubeconfig: {
        ...KUBECONFIG,
        description:
          "Kubeconfig of the cluster in the data-service network, where the gateway runs; required unless gatewayVm. Kept a secret.",
      },
      gatewayNamespace: str("Namespace of the gateway; must exist. Default klutch-wireguard.", {
        plain: true,
      }),
      appClusters: list(
        ref("klutch:network:WireguardAppCluster", "app cluster"),
        "The app clusters, one client each; their names must be known before the component is created.",
      ),
      connections: list(
        ref("klutch:network:WireguardConnection", "connection"),
        "The connections to serve (may be empty: the bridge adds them later).",
        true,
      ),
      tunnelCidr: str("Block the tunnel addresses come from. Default 100.96.0.0/24.", { plain: true }),
      listenPort: int("UDP port the gateway listens on. Default 51820.", true),
      endpoint: str(
        "host:port where clients reach the gateway; else the gateway Service's load balancer address.",
      ),
      persistentKeepalive: int("Seconds between client keepalives, 0 for none. Default 25.", true),
      rotation: str("Change to replace every key pair of the tunnel. Default initial."),
      previousAssignments: map(
        str("tunnel address"),
        "The `assignments` output of the last run, so tunnel addresses never move.",
      ),
      clusterCidrs: list(
        ref("klutch:network:NamedCidr", "cidr"),
        "Node, pod and service networks of the clusters; the tunnel must not overlap them.",
        true,
      ),
      dataServiceCidrs: list(
        ref("klutch:network:NamedCidr", "cidr"),
        "Data-service networks; instance hosts must lie in them.",
        true,
      ),
      skipAwait: SKIP_AWAIT,
      gatewayVm: bool(
        "The gateway runs on a VM: output its cloud-init user data (gatewayUserData, a secret) instead of gateway objects.",
        true,
      ),
      gatewayServiceType: str("Type of the gateway's Service. Default LoadBalancer.", {
        plain: true,
        enum: ["ClusterIP", "NodePort", "LoadBalancer"],
      }),
      gatewayExposure: ref(
        "klutch:network:Exposure",
        "Who may reach the gateway's UDP port: the app clusters' clients. Required unless the Service is ClusterIP or the gateway is a VM, so it is never world-open by omission.",
        true,
      ),
      bridgeConnections: bool(
        "The Crossplane bridge adds the connections at run time: the gateway gets a flows ConfigMap and a forwarder-list server, each client an agent and a headless Service; bridgeSettings says what the bridge needs.",
        true,
      ),
      gatewayVmFlows: ref(
        "klutch:network:ConfigMapRef",
        "With gatewayVm and bridgeConnections: the flows ConfigMap on the control plane that the VM reads.",
        true,
      ),
      image: str("WireGuard image.", { plain: true }),
      forwarderImage: str("Image of the clients' TCP forwarders.", { plain: true }),
      clusterDomain: str("Default cluster.local.", { plain: true }),
    },
    requiredInputs: ["appClusters", "connections"],
    outputs: {
      endpoints: map(ENDPOINT, "Per connection: what its XTCPConnection status reports."),
      assignments: map(
        str("tunnel address"),
        "App cluster → tunnel address; pass back as previousAssignments.",
      ),
      gatewayPublicKey: str("The gateway's WireGuard public key."),
      clientPublicKeys: map(str("public key"), "App cluster → its client's public key."),
      bridgeSettings: map(
        ref("klutch:network:WireguardBridgeSettings", "settings"),
        "Per app cluster, what the bridge needs (only with bridgeConnections).",
      ),
      gatewayUserData: secret(
        str("cloud-init user data of the gateway VM (only with gatewayVm); holds the private key."),
      ),
    },
    requiredOutputs: ["endpoints", "assignments", "gatewayPublicKey", "clientPublicKeys"],
  },
];

/** Its `networkConnector` settings (model/config.ts), as the environment's NetworkConnector type shows them. */
export const wireguardConnectorFields: Record<string, Prop> = {
  tunnelCidr: str("tunnel addresses. Default 100.96.0.0/24."),
  listenPort: int("the gateway's UDP port. Default 51820."),
  endpoint: str("host:port clients dial."),
  serviceType: str("the gateway's UDP Service (no ClusterIP). Default LoadBalancer.", {
    enum: ["LoadBalancer", "NodePort"],
  }),
  dataServicePorts: CONNECTOR_DATA_SERVICE_PORTS,
  keyRotation: str("change to rotate the key pairs."),
  ...CONNECTOR_EXPOSURE_FIELDS,
};
