import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { type Exposure, exposureArgProblem } from "../contract/exposure";
import { ConnectionEnhancement, NamedCidr, WireguardPlan, planWireguard } from "./model/planner";
import {
  ConsumerEndpoint,
  DeploymentManifest,
  K8sRenderOptions,
  ServiceManifest,
  renderClientManifests,
  renderGatewayManifests,
  renderGatewayService,
  renderClientHeadlessService,
  renderClientNetworkPolicy,
  renderGatewayFlows,
  renderGatewayNetworkPolicy,
  clientHost,
  gatewayFlowsName,
} from "./model/render-k8s";
import { renderGatewayCloudInit } from "./model/render-cloud-init";
import { renderClientWgQuick, renderGatewaySetconf, renderGatewayWgQuick } from "./model/render-wg-quick";
import { WireguardKeyPair } from "./key-provider";
import { DEFAULT_CONFIG_PORT } from "./model/cluster-config";
import type { WireguardSettings } from "./model/settings";

export interface WireguardAppClusterArgs {
  /** The app cluster's name in the environment config; names its resources. */
  name: string;
  /** Provider of the app cluster; the client and the consumer Services go there. */
  provider: k8s.Provider;
  /** Namespace of the client; must exist. Default klutch-wireguard. */
  namespace?: string;
}

export interface WireguardConnectionArgs {
  /** Unique name (the XTCPConnection's), a DNS-1123 label; names the consumer Service. */
  name: string;
  appCluster: string;
  instanceHost: pulumi.Input<string>;
  port: pulumi.Input<number>;
  enhancements?: pulumi.Input<ConnectionEnhancement[]>;
}

export interface WireguardTunnelArgs {
  /** Provider of the cluster in the data-service network; unused with gatewayVm. */
  gatewayProvider?: k8s.Provider;
  /** Namespace of the gateway; must exist. Default klutch-wireguard. */
  gatewayNamespace?: string;
  appClusters: WireguardAppClusterArgs[];
  connections: WireguardConnectionArgs[];
  /** Default 100.96.0.0/24. */
  tunnelCidr?: pulumi.Input<string>;
  /** Default 51820. */
  listenPort?: pulumi.Input<number>;
  /** host:port where clients reach the gateway; else the gateway Service's load balancer address. */
  endpoint?: pulumi.Input<string>;
  persistentKeepalive?: pulumi.Input<number>;
  /**
   * The gateway's key pair, when its owner needs the private key too (a gateway VM whose
   * cloud-init another component renders); made here when omitted.
   */
  gatewayKey?: WireguardKeyPair;
  /** Change to replace every key pair of the tunnel. Default "initial". */
  rotation?: pulumi.Input<string>;
  /** The `assignments` output of the last run, so tunnel addresses never move. */
  previousAssignments?: pulumi.Input<Record<string, string>>;
  clusterCidrs?: pulumi.Input<NamedCidr[]>;
  dataServiceCidrs?: pulumi.Input<NamedCidr[]>;
  /** Add pulumi.com/skipAwait to workloads (local clusters run no kubelet). */
  skipAwait?: boolean;
  /** Gateway on a VM: output cloud-init user data (secret) instead of gateway manifests. */
  gatewayVm?: boolean;
  /** Default LoadBalancer. */
  gatewayServiceType?: "ClusterIP" | "NodePort" | "LoadBalancer";
  /**
   * A NodePort gateway's node address: without `endpoint`, the clients dial it at the port
   * the API server gave the Service.
   */
  gatewayNodeAddress?: pulumi.Input<string>;
  /**
   * Who may reach the gateway's UDP port (network/contract/exposure.ts; wireguard/exposure.ts derives
   * it from the app clusters): the Service's source ranges and scheme. Required unless the
   * Service is ClusterIP or the gateway is a VM, so the gateway is never world-open by omission.
   */
  gatewayExposure?: Exposure;
  image?: string;
  forwarderImage?: string;
  clusterDomain?: string;
  /**
   * The Crossplane bridge adds the connections at run time (network/wireguard/model/cluster-config.ts):
   * the gateway gets a flows ConfigMap and a forwarder-list server, each client an agent and a
   * headless Service. `bridgeSettings` then says what the bridge needs per app cluster.
   * With gatewayVm, the VM reads the flows ConfigMap named by gatewayVmFlows instead.
   */
  bridgeConnections?: boolean | { configPort?: number };
  /**
   * With gatewayVm and bridgeConnections: the flows ConfigMap on the control plane that the VM
   * reads (the environment makes it and the VM's reader; OpenstackWireguardGateway `flows`).
   */
  gatewayVmFlows?: { namespace: string; name: string };
}

/** What the bridge needs to realise one app cluster's connections: its settings' schema type. */
export type WireguardBridgeSettings = WireguardSettings;

const DEFAULT_NAMESPACE = "klutch-wireguard";
/** A documentation address (RFC 5737) for planning addresses alone; nothing ever dials it. */
const ADDRESS_ONLY_ENDPOINT = "192.0.2.1:51820";

/**
 * The WireGuard network path of a set of XTCPConnections: a gateway in the data-service
 * network (pod or VM), one client per app cluster and one consumer Service per connection.
 * Everything about addresses, peers and filters comes from the pure planner; this
 * component only registers resources and keeps private keys inside secrets.
 */
export class WireguardTunnel extends pulumi.ComponentResource {
  /** Per connection: what its XTCPConnection status reports. */
  public readonly endpoints: pulumi.Output<Record<string, ConsumerEndpoint>>;
  /** App cluster → tunnel address; pass back as previousAssignments. */
  public readonly assignments: pulumi.Output<Record<string, string>>;
  /** The plan (no keys in it). */
  public readonly plan: pulumi.Output<WireguardPlan>;
  public readonly gatewayPublicKey: pulumi.Output<string>;
  public readonly clientPublicKeys: pulumi.Output<Record<string, string>>;
  /** cloud-init user data of the gateway VM (secret); only with gatewayVm. */
  public readonly gatewayUserData?: pulumi.Output<string>;
  /** Per app cluster, what the bridge needs (only with bridgeConnections). */
  public readonly bridgeSettings?: pulumi.Output<Record<string, WireguardBridgeSettings>>;

  constructor(name: string, args: WireguardTunnelArgs, opts?: pulumi.ComponentResourceOptions) {
    // Checked before super(): bad input registers nothing, not even this component.
    checkShape(args);
    super("klutch:network:WireguardTunnel", name, {}, opts);

    const render: K8sRenderOptions = {
      name,
      gatewayNamespace: args.gatewayNamespace ?? DEFAULT_NAMESPACE,
      clientNamespace: DEFAULT_NAMESPACE,
      image: args.image,
      forwarderImage: args.forwarderImage,
      gatewayServiceType: args.gatewayServiceType,
      gatewayExposure: args.gatewayExposure,
      skipAwait: args.skipAwait,
      clusterDomain: args.clusterDomain,
      ...(args.bridgeConnections
        ? {
            bridgeConnections: {
              configPort:
                (typeof args.bridgeConnections === "object"
                  ? args.bridgeConnections.configPort
                  : undefined) ?? DEFAULT_CONFIG_PORT,
            },
          }
        : {}),
    };
    const listenPort = pulumi.output(args.listenPort ?? 51820);
    const rotation = pulumi.output(args.rotation ?? "initial");

    const gatewayKey =
      args.gatewayKey ?? new WireguardKeyPair(`${name}-gateway-key`, { rotation }, { parent: this });
    const clientKeys = args.appClusters.map(
      (c) => new WireguardKeyPair(`${name}-${c.name}-key`, { rotation }, { parent: this }),
    );
    this.gatewayPublicKey = gatewayKey.publicKey;
    this.clientPublicKeys = pulumi
      .all(clientKeys.map((k) => k.publicKey))
      .apply((keys) => Object.fromEntries(args.appClusters.map((c, i) => [c.name, keys[i] ?? ""])));
    // The provider's state marks it secret too; wrapping here keeps it secret whatever the engine does.
    const gatewayPrivateKey = pulumi.secret(gatewayKey.privateKey);

    let gatewayService: k8s.core.v1.Service | undefined;
    if (!args.gatewayVm && args.gatewayProvider) {
      const svc = listenPort.apply((p) => renderGatewayService(p, render));
      gatewayService = new k8s.core.v1.Service(`${name}-gateway-service`, fromManifest(svc), {
        parent: this,
        provider: args.gatewayProvider,
      });
      const policy = listenPort.apply((p) => renderGatewayNetworkPolicy(p, render));
      new k8s.networking.v1.NetworkPolicy(
        `${name}-gateway-ingress`,
        { metadata: policy.metadata, spec: policy.spec },
        { parent: this, provider: args.gatewayProvider },
      );
    }

    const appClusters = args.appClusters.map((c) => c.name);
    const tunnelCidr = pulumi.output(args.tunnelCidr ?? "100.96.0.0/24");
    this.plan = pulumi
      .all([
        tunnelCidr,
        listenPort,
        gatewayEndpoint(args, listenPort, gatewayService),
        pulumi.output(args.persistentKeepalive),
        pulumi.output(args.connections),
        pulumi.output(args.clusterCidrs ?? []),
        pulumi.output(args.dataServiceCidrs ?? []),
        pulumi.output(args.previousAssignments ?? {}),
      ])
      .apply(
        ([tunnelCidr, port, endpoint, keepalive, connections, clusterCidrs, dataServiceCidrs, previous]) =>
          planWireguard({
            tunnelCidr,
            listenPort: port,
            endpoint,
            persistentKeepalive: keepalive,
            appClusters,
            connections,
            clusterCidrs,
            dataServiceCidrs,
            previousAssignments: previous,
          }),
      );
    this.assignments = this.plan.apply((p) => p.assignments);

    const gatewayKeys = pulumi
      .all([gatewayPrivateKey, this.clientPublicKeys])
      .apply(([privateKey, clientPublicKeys]) => ({ privateKey, clientPublicKeys }));

    if (args.gatewayVm) {
      this.gatewayUserData = pulumi.secret(
        pulumi.all([this.plan, gatewayKeys]).apply(([plan, keys]) => renderGatewayCloudInit(plan, keys)),
      );
    } else if (args.gatewayProvider) {
      this.gateway(name, args.gatewayProvider, render, gatewayKeys);
    }

    const endpoints = args.appClusters.map((cluster, i) =>
      this.client(
        name,
        cluster,
        render,
        rotation,
        clientKeys[i] as WireguardKeyPair,
        gatewayKey.publicKey,
        args,
      ),
    );
    if (render.bridgeConnections) {
      const flows = args.gatewayVmFlows ?? {
        namespace: render.gatewayNamespace,
        name: gatewayFlowsName(name),
      };
      // Addresses never depend on the gateway's endpoint, which may stay unknown (a load
      // balancer without an address): planned apart from it, so the bridge's settings do not wait.
      this.bridgeSettings = pulumi
        .all([tunnelCidr, pulumi.output(args.connections), pulumi.output(args.previousAssignments ?? {})])
        .apply(([cidr, connections, previous]) => {
          const { assignments } = planWireguard({
            tunnelCidr: cidr,
            listenPort: 51820,
            endpoint: ADDRESS_ONLY_ENDPOINT,
            appClusters,
            connections,
            previousAssignments: previous,
          });
          return Object.fromEntries(
            args.appClusters.map((c) => [
              c.name,
              {
                tunnelCidr: cidr,
                clientAddress: assignments[c.name] ?? "",
                flows,
                clientHost: clientHost({ ...render, clientNamespace: c.namespace ?? DEFAULT_NAMESPACE }),
              },
            ]),
          );
        });
    }
    this.endpoints = pulumi
      .all(endpoints)
      .apply((all) => Object.assign({}, ...all) as Record<string, ConsumerEndpoint>);

    this.registerOutputs({
      endpoints: this.endpoints,
      assignments: this.assignments,
      plan: this.plan,
      gatewayPublicKey: this.gatewayPublicKey,
      clientPublicKeys: this.clientPublicKeys,
      ...(this.gatewayUserData ? { gatewayUserData: this.gatewayUserData } : {}),
      ...(this.bridgeSettings ? { bridgeSettings: this.bridgeSettings } : {}),
    });
  }

  /** Gateway Secret (both config flavours), filter ConfigMap and Deployment. */
  private gateway(
    name: string,
    provider: k8s.Provider,
    render: K8sRenderOptions,
    keys: pulumi.Output<{ privateKey: string; clientPublicKeys: Record<string, string> }>,
  ): void {
    const manifests = this.plan.apply((p) => renderGatewayManifests(p, render));
    const opts = { parent: this, provider };
    const secret = new k8s.core.v1.Secret(
      `${name}-gateway-secret`,
      {
        metadata: manifests.secret.metadata,
        type: "Opaque",
        stringData: pulumi.secret(
          pulumi.all([this.plan, keys]).apply(([plan, k]) => ({
            "wg0.conf": renderGatewayWgQuick(plan, k),
            "wg0.setconf": renderGatewaySetconf(plan, k),
          })),
        ),
      },
      opts,
    );
    const rules = new k8s.core.v1.ConfigMap(
      `${name}-gateway-rules`,
      { metadata: manifests.rules.metadata, data: manifests.rules.data },
      opts,
    );
    // Created empty and never changed here (a changed ConfigMap would be replaced, dropping
    // the bridge's keys): the bridge's groups own every key in it.
    const flows = render.bridgeConnections
      ? [
          new k8s.core.v1.ConfigMap(
            `${name}-gateway-flows`,
            { metadata: renderGatewayFlows(render).metadata },
            opts,
          ),
        ]
      : [];
    new k8s.apps.v1.Deployment(`${name}-gateway-deployment`, fromDeployment(manifests.deployment), {
      ...opts,
      dependsOn: [secret, rules, ...flows],
    });
  }

  /** One app cluster's client: Secret, Deployment and one Service per connection. */
  private client(
    name: string,
    cluster: WireguardAppClusterArgs,
    base: K8sRenderOptions,
    rotation: pulumi.Output<string>,
    key: WireguardKeyPair,
    gatewayPublicKey: pulumi.Output<string>,
    args: WireguardTunnelArgs,
  ): pulumi.Output<Record<string, ConsumerEndpoint>> {
    const opts = { parent: this, provider: cluster.provider };
    const manifests = pulumi.all([this.plan, rotation]).apply(([plan, keyRotation]) =>
      renderClientManifests(plan, cluster.name, {
        ...base,
        clientNamespace: cluster.namespace ?? DEFAULT_NAMESPACE,
        keyRotation,
      }),
    );
    const config = pulumi
      .all([this.plan, pulumi.secret(key.privateKey), gatewayPublicKey])
      .apply(([plan, privateKey, gatewayKey]) =>
        renderClientWgQuick(plan, cluster.name, { privateKey, gatewayPublicKey: gatewayKey }),
      );
    const secret = new k8s.core.v1.Secret(
      `${name}-${cluster.name}-client-secret`,
      {
        metadata: manifests.secret.metadata,
        type: "Opaque",
        stringData: pulumi.secret(config.apply((c) => ({ "wg0.conf": c }))),
      },
      opts,
    );
    new k8s.apps.v1.Deployment(
      `${name}-${cluster.name}-client-deployment`,
      fromDeployment(manifests.deployment),
      {
        ...opts,
        dependsOn: [secret],
      },
    );
    const policy = renderClientNetworkPolicy(cluster.name, {
      ...base,
      clientNamespace: cluster.namespace ?? DEFAULT_NAMESPACE,
    });
    new k8s.networking.v1.NetworkPolicy(
      `${name}-${cluster.name}-client-ingress`,
      { metadata: policy.metadata, spec: policy.spec },
      opts,
    );
    if (base.bridgeConnections) {
      const headless = renderClientHeadlessService(cluster.name, {
        ...base,
        clientNamespace: cluster.namespace ?? DEFAULT_NAMESPACE,
      });
      new k8s.core.v1.Service(
        `${name}-${cluster.name}-client-service`,
        { metadata: headless.metadata, spec: headless.spec },
        opts,
      );
    }
    for (const conn of args.connections.filter((c) => c.appCluster === cluster.name)) {
      const svc = manifests.services.apply((all) => {
        const found = all.find((s) => s.metadata.labels["klutch.anynines.com/connection"] === conn.name);
        if (!found) throw new Error(`WireguardTunnel: the plan has no Service for connection ${conn.name}`);
        return found;
      });
      new k8s.core.v1.Service(`${name}-${conn.name}-service`, fromManifest(svc), opts);
    }
    return manifests.endpoints;
  }
}

/** Checks what must be known before any Output resolves: names and the gateway placement. */
function checkShape(args: WireguardTunnelArgs): void {
  if (!args.gatewayVm && !args.gatewayProvider) {
    throw new Error(
      "WireguardTunnel: gatewayProvider is required (the cluster in the data-service network); or set gatewayVm: true to get cloud-init user data for a gateway VM",
    );
  }
  if (!args.gatewayVm) {
    const problem = exposureArgProblem(
      "WireguardTunnel",
      "gatewayExposure",
      args.gatewayServiceType ?? "LoadBalancer",
      args.gatewayExposure,
    );
    if (problem) throw new Error(problem);
  }
  if (args.gatewayVm && args.bridgeConnections && !args.gatewayVmFlows) {
    throw new Error(
      "WireguardTunnel: bridgeConnections with gatewayVm needs gatewayVmFlows (the flows ConfigMap the VM reads; OpenstackWireguardGateway `flows` gives the VM its reader)",
    );
  }
  const clusters = new Set(args.appClusters.map((c) => c.name));
  if (clusters.has("gateway")) {
    // `<name>-gateway-key` and friends would collide with the gateway's resources.
    throw new Error(
      'WireguardTunnel: an app cluster may not be named "gateway" (reserved for the gateway); rename it',
    );
  }
  for (const [i, conn] of args.connections.entries()) {
    if (!clusters.has(conn.appCluster)) {
      throw new Error(
        `WireguardTunnel: connections[${i}] (${conn.name}).appCluster ${JSON.stringify(conn.appCluster)} is not in appClusters (${[...clusters].join(", ") || "none"}); add the cluster or fix the name`,
      );
    }
  }
}

/**
 * The endpoint clients dial: the configured one, else a NodePort gateway's node and node port,
 * else the gateway Service's load balancer.
 */
function gatewayEndpoint(
  args: WireguardTunnelArgs,
  listenPort: pulumi.Output<number>,
  service: k8s.core.v1.Service | undefined,
): pulumi.Output<string | undefined> {
  if (args.endpoint !== undefined) return pulumi.output(args.endpoint);
  if (!service) return pulumi.output(undefined);
  if (args.gatewayServiceType === "NodePort" && args.gatewayNodeAddress !== undefined)
    return pulumi.all([args.gatewayNodeAddress, service.spec]).apply(([address, spec]) => {
      const port = spec?.ports?.[0]?.nodePort;
      return port ? `${address}:${port}` : undefined;
    });
  return pulumi.all([service.status, listenPort]).apply(([status, port]) => {
    const ingress = status?.loadBalancer?.ingress?.[0];
    const host = ingress?.ip ?? ingress?.hostname;
    return host ? `${host}:${port}` : undefined;
  });
}

function fromManifest(m: pulumi.Output<ServiceManifest>): k8s.core.v1.ServiceArgs {
  return { metadata: m.metadata, spec: m.spec };
}

function fromDeployment(m: pulumi.Output<DeploymentManifest>): k8s.apps.v1.DeploymentArgs {
  return { metadata: m.metadata, spec: m.spec };
}
