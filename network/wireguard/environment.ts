import { mirroredImage } from "../../lib/images/mirror";
import { DEFAULT_FORWARDER_IMAGE, DEFAULT_WIREGUARD_IMAGE } from "./model/render-k8s";
import * as k8s from "@pulumi/kubernetes";
import * as openstack from "@pulumi/openstack";
import * as pulumi from "@pulumi/pulumi";
import { OpenstackCluster } from "../../clusters/openstack/openstack-cluster";
import { SETTINGS_NAMESPACE } from "../../lib/bridge/settings";
import type { EnvironmentBuilder, EnvironmentPart } from "../contract/environment-context";
import type { WireguardConnectorConfig } from "./model/config";
import { gatewayExposure } from "./model/exposure";
import { WireguardKeyPair } from "./key-provider";
import { OpenstackWireguardGateway } from "./openstack-gateway";
import { WireguardTunnel } from "./wireguard-tunnel";
import { gatewayFlowsName } from "./model/render-k8s";
import { WireguardFlowsReader } from "./flows-reader";
import { DEFAULT_CONFIG_PORT } from "./model/cluster-config";

/** The namespace of the tunnel's client on each app cluster that uses wireguard. */
export const WIREGUARD_CLIENT_NAMESPACE = "klutch-wireguard";

/**
 * The WireGuard tunnel of the environment: one gateway in the data-service network and a
 * client per app cluster that uses `wireguard`, with key pairs from the key provider, the
 * planner's tunnel addresses and the rendered nftables filter (WireguardTunnel). The gateway
 * runs as a pod on the control plane cluster (it sits in the data-service network), or as an
 * OpenStack VM (OpenstackWireguardGateway) when the control plane is on OpenStack, where its
 * floating IP is reserved first so the clients' configs can name it.
 *
 * The tunnel starts with no connections: each connection's forwarder and its flow on the
 * gateway are the bridge's (network/wireguard/bridge-program.ts, cluster-config.ts), so they
 * follow the live XTCPConnections without an environment update. The bridge
 * publishes them in the gateway's flows ConfigMap on the control plane (bridgeConnections):
 * a gateway pod mounts it, a gateway VM reads it with a token that may get only that
 * ConfigMap (WireguardFlowsReader, flows-sync.ts). Validation (checks.ts) has made sure the
 * app clusters agree on one tunnel CIDR.
 */
export const wireguardEnvironment: EnvironmentBuilder<WireguardConnectorConfig> = (ctx, users) => {
  const first = users[0];
  if (!first) return {};
  const settings = first.connector;
  const name = `${ctx.name}-wireguard`;
  const opts = { parent: ctx.parent };
  const cp = ctx.controlPlane;
  const local = ctx.config.controlPlane.infrastructure === "local";
  const out: Record<string, pulumi.Resource> = {};

  // The client's namespace on each app cluster, so the tunnel's objects have a home of their own.
  const namespaces = users.map(
    ({ app, access }) =>
      new k8s.core.v1.Namespace(
        `${name}-${app.name}-namespace`,
        {
          metadata: {
            name: WIREGUARD_CLIENT_NAMESPACE,
            labels: {
              "klutch.anynines.com/environment": ctx.config.environment,
              "app.kubernetes.io/managed-by": "pulumi",
            },
          },
        },
        { ...opts, provider: access.provider },
      ),
  );

  const clusterCidrs = [ctx.config.controlPlane, ...ctx.config.appClusters].flatMap((c) =>
    (["nodeCidr", "podCidr", "serviceCidr"] as const).flatMap((f) => {
      const cidr = c.network?.[f];
      return cidr ? [{ name: `${c.name} ${f}`, cidr }] : [];
    }),
  );
  const dataServiceCidr = ctx.config.controlPlane.dataServiceCidr;
  const common = {
    appClusters: users.map(({ app, access }) => ({
      name: app.name,
      provider: access.provider,
      namespace: WIREGUARD_CLIENT_NAMESPACE,
    })),
    connections: [],
    tunnelCidr: settings.tunnelCidr,
    listenPort: settings.listenPort,
    rotation: settings.keyRotation,
    clusterCidrs,
    ...(dataServiceCidr
      ? { dataServiceCidrs: [{ name: "control-plane dataServiceCidr", cidr: dataServiceCidr }] }
      : {}),
    // A local control plane without a node runs no kubelet: nothing would ever become ready.
    skipAwait: local && !ctx.controlPlaneNode,
    // A local node pulls nothing: the tunnel runs from the wireguard image it imported (every
    // local node imports the same build, so the app clusters' nodes hold it too).
    ...(ctx.controlPlaneNode?.images.wireguard
      ? {
          image: ctx.controlPlaneNode.images.wireguard,
          forwarderImage: ctx.controlPlaneNode.images.wireguard,
        }
      : ctx.config.imageRegistry
        ? // An operator's mirror (klutch:imageRegistry) serves the pods' images too.
          {
            image: mirroredImage(DEFAULT_WIREGUARD_IMAGE, ctx.config.imageRegistry),
            forwarderImage: mirroredImage(DEFAULT_FORWARDER_IMAGE, ctx.config.imageRegistry),
          }
        : {}),
  };

  // Who may reach the gateway: every app cluster's clients (checks.ts made sure each is known).
  const exposure = gatewayExposure(users.map(({ app, connector }) => ({ app, connector })));

  // The bridge's namespace on the control plane, which the environment always creates: the
  // gateway's objects (and a gateway VM's flows) wait for it (a first `up` would otherwise race its creation).
  const gatewayNamespace = ctx.namespaces[`${ctx.config.controlPlane.name}/${SETTINGS_NAMESPACE}`];
  if (!gatewayNamespace)
    throw new Error(
      `internal: the environment creates no ${SETTINGS_NAMESPACE} namespace for the WireGuard gateway`,
    );

  if (cp instanceof OpenstackCluster) {
    const os = ctx.config.controlPlane.openstack;
    const fip = new openstack.networking.FloatingIp(
      `${name}-gateway-address`,
      {
        pool: cp.network.externalNetworkId,
        description: `Klutch WireGuard gateway of ${ctx.config.environment}`,
      },
      { ...opts, provider: cp.network.provider },
    );
    const gatewayKey = new WireguardKeyPair(`${name}-gateway-key`, { rotation: settings.keyRotation }, opts);
    // The bridge publishes the connections on the control plane; the VM reads them from there.
    const flows = { namespace: SETTINGS_NAMESPACE, name: gatewayFlowsName(name) };
    const reader = new WireguardFlowsReader(
      `${name}-flows-reader`,
      {
        provider: cp.provider,
        kubeconfig: cp.kubeconfig,
        ...(ctx.config.controlPlane.kubeconfig?.context
          ? { context: ctx.config.controlPlane.kubeconfig.context }
          : {}),
        namespace: flows.namespace,
        configMap: flows.name,
        labels: { "klutch.anynines.com/environment": ctx.config.environment },
      },
      { ...opts, dependsOn: [gatewayNamespace] },
    );
    const tunnel = new WireguardTunnel(
      name,
      {
        ...common,
        gatewayVm: true,
        bridgeConnections: true,
        gatewayVmFlows: flows,
        gatewayKey,
        endpoint: settings.endpoint ?? pulumi.interpolate`${fip.address}:${settings.listenPort}`,
      },
      { ...opts, dependsOn: namespaces },
    );
    const gateway = new OpenstackWireguardGateway(
      `${name}-gateway`,
      {
        network: cp.network,
        plan: tunnel.plan,
        keys: pulumi
          .all([pulumi.secret(gatewayKey.privateKey), tunnel.clientPublicKeys])
          .apply(([privateKey, clientPublicKeys]) => ({ privateKey, clientPublicKeys })),
        listenPort: settings.listenPort,
        // Where the clients' packets come from: their allowed sources, else their egress (NAT)
        // addresses, else their nodes (validation refuses publicEndpoint for a VM).
        clientCidrs: exposure.sourceRanges,
        dataServicePorts: settings.dataServicePorts,
        image: os?.gatewayImage ?? "debian-12",
        flavor: os?.gatewayFlavor ?? "m1.small",
        packageMirrors: os?.gatewayPackageMirrors ?? ["0.0.0.0/0"],
        ...(os?.keypair ? { keypair: os.keypair } : {}),
        floatingIpAddress: fip.address,
        flows: reader.access.apply((a) => ({ ...a, configPort: DEFAULT_CONFIG_PORT })),
      },
      opts,
    );
    out.tunnel = tunnel;
    out.gateway = gateway;
    out.flowsReader = reader;
    return out;
  }

  out.tunnel = new WireguardTunnel(
    name,
    {
      ...common,
      gatewayProvider: cp.provider,
      gatewayNamespace: SETTINGS_NAMESPACE,
      ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
      gatewayServiceType: settings.serviceType,
      // A NodePort gateway on a local node: the clients dial the node's address (checks.ts
      // refuses a NodePort with neither this nor an endpoint).
      ...(settings.serviceType === "NodePort" && ctx.controlPlaneNode?.address
        ? { gatewayNodeAddress: ctx.controlPlaneNode.address }
        : {}),
      gatewayExposure: exposure,
      // The bridge adds each connection's forwarder and flows as they come and go.
      bridgeConnections: true,
    },
    { ...opts, dependsOn: [...namespaces, gatewayNamespace] },
  );
  return out;
};

/**
 * The environment side as the registry's spec loads it: the tunnel, and what the bridge needs
 * per app cluster (WireguardTunnel.bridgeSettings), known once the tunnel is planned.
 */
export const wireguardEnvironmentPart: EnvironmentPart<WireguardConnectorConfig> = {
  build: wireguardEnvironment,
  bridgeSettings: (built) => {
    const tunnel = built.tunnel;
    if (tunnel instanceof WireguardTunnel && tunnel.bridgeSettings)
      return tunnel.bridgeSettings.apply((s): Record<string, unknown> => s);
    return pulumi.output(0).apply((): Record<string, unknown> => ({}));
  },
};
