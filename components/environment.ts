import { TeardownDrain } from "../providers/dynamic/teardown-drain";
import { A8sNetworkBindings } from "./dataservices/a8s-network-bindings";
import { A9sNetworkBindings } from "./dataservices/a9s-network-bindings";
import { LocalDataServices } from "./dataservices/local-data-services";
import { BindingAdmission } from "./dataservices/binding-admission";
import { offeredNetworkBindings } from "../lib/dataservices/binding-admission";
import type * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { CrossplaneSource } from "../host/automation/crossplane-source";
import type { EnvironmentConfig } from "./config/schema";
import type { BridgePlan } from "../lib/bridge/bridge-plan";
import type { InstanceNamesServer } from "../lib/instance-names/plan";
import { InstanceNames } from "./instance-names/instance-names";
import { SETTINGS_NAMESPACE } from "../lib/bridge/settings";
import type { AnyninesCredentials } from "../lib/crossplane/credentials";
import type { CrossplanePlan } from "../lib/crossplane/crossplane-plan";
import { buildNetworkPaths, type NetworkPaths } from "../network/plugins/environments";
import type { AppClusterBinding } from "./bind/app-cluster-binding";
import type { KlutchBindBackend } from "./bind/bind-backend";
import type { ExportedApi } from "./bind/exported-api";
import type { OidcProvider } from "./bind/oidc-provider";
import type { BridgeDeployment } from "./bridge/bridge-deployment";
import type { ClusterAccess } from "../clusters/types";
import { NetworkConnectorApi } from "./connector-api/connector-api";
import { Crossplane } from "./crossplane/crossplane";
import { bindPart } from "./environment-parts/bind";
import { bridgePart } from "./environment-parts/bridge";
import { crossplaneImages } from "./environment-parts/crossplane-images";
import { clusterAccess, plannedNamespaceResources } from "./environment-parts/clusters";
import { planEnvironment, type EnvironmentPlan } from "./plan/environment-plan";

/** The secret settings, wrapped as Pulumi secrets so they never reach state or logs in plain text. */
export interface EnvironmentSecrets {
  oidcClientSecret?: pulumi.Output<string>;
  bindCookieSigningKey?: pulumi.Output<string>;
  bindCookieEncryptionKey?: pulumi.Output<string>;
  bindTlsCertificate?: pulumi.Output<string>;
  bindTlsKey?: pulumi.Output<string>;
  anyninesCredentials?: pulumi.Output<Record<string, AnyninesCredentials>>;
  bridgePassphrase?: pulumi.Output<string>;
  /** The text of an AWS shared credentials file for the deployed bridge's S3 state. */
  bridgeStateCredentials?: pulumi.Output<string>;
}

export interface KlutchEnvironmentArgs {
  /** The validated environment config (components/config/validate.ts). */
  config: EnvironmentConfig;
  /** Secret settings, already Pulumi secrets. */
  secrets?: EnvironmentSecrets;
  /** Where Crossplane's chart (and, for local clusters, its CRDs) come from; resolved by the caller. */
  crossplaneSource: CrossplaneSource;
  /** How Crossplane core runs (lib/crossplane/crossplane-plan.ts). */
  crossplanePlan: CrossplanePlan;
  /**
   * How the APIs reach a control plane that can take packages: `adopting` (this release's, the
   * default), or as the release before (`loose` objects) or the next (`packaged` only) does:
   * components/crossplane/api-objects.ts. Only for the test of those upgrades.
   */
  apiDelivery?: ApiDelivery;
  /** Directory that relative paths in the config are resolved against. */
  projectDir: string;
  /** The bridge Deployment to deploy (lib/bridge/bridge-plan.ts); none when undefined. */
  bridge?: BridgePlan;
  /** Each app cluster's names server (lib/instance-names/plan.ts); none without instanceNames.zones. */
  instanceNames?: InstanceNamesServer[];
}

/**
 * A whole Klutch environment: the control plane cluster, the app clusters, and what runs
 * on them. It wires the per-concern components together from the config; each of them can
 * also be used on its own.
 */
export class KlutchEnvironment extends pulumi.ComponentResource {
  public readonly controlPlane: ClusterAccess;
  public readonly appClusters: Record<string, ClusterAccess>;
  public readonly crossplane: Crossplane;
  public readonly connectorApi: NetworkConnectorApi;
  public readonly oidc: OidcProvider;
  public readonly bindBackend: KlutchBindBackend;
  public readonly exportedApis: ExportedApi[];
  /** One binding per app cluster, by name. */
  public readonly bindings: Record<string, AppClusterBinding>;
  /** What each network implementation built for the app clusters using it (peerings, routes, tunnels, addresses). */
  public readonly networkPaths: NetworkPaths;
  /** The Crossplane bridge as a Deployment on the control plane, when the config deploys it. */
  public readonly bridge?: BridgeDeployment;
  /** Namespaces created, by cluster name. */
  public readonly namespaces: pulumi.Output<Record<string, string[]>>;

  constructor(name: string, args: KlutchEnvironmentArgs, opts?: pulumi.ComponentResourceOptions) {
    super("klutch:index:Environment", name, {}, opts);
    const { config } = args;
    const planned = planEnvironment(config, args.crossplanePlan, args.bridge);
    const plan = withApiDelivery(planned, args.apiDelivery ?? "adopting");
    const cp = config.controlPlane.name;

    // The clusters, and the namespaces the parts below place objects in.
    const env = { config, projectDir: args.projectDir };
    this.controlPlane = clusterAccess(this, `${name}-${cp}`, config.controlPlane, env);
    this.appClusters = Object.fromEntries(
      config.appClusters.map((app) => [app.name, clusterAccess(this, `${name}-${app.name}`, app, env)]),
    );
    const namespaces = plannedNamespaceResources(
      this,
      name,
      plan.namespaces,
      { ...this.appClusters, [cp]: this.controlPlane },
      plan.labels,
    );
    this.namespaces = namespacesByCluster(namespaces);

    // Each app cluster's network implementation: what its environment side builds.
    const xpRun = args.crossplanePlan.run;
    const network = buildNetworkPaths({
      name,
      config,
      controlPlane: this.controlPlane,
      appClusters: this.appClusters,
      parent: this,
      namespaces,
      ...(xpRun.kind === "node" ? { controlPlaneNode: xpRun.node } : {}),
    });
    this.networkPaths = network.paths;

    // Crossplane, and the connector API on it.
    const crossplaneNs = namespaces[`${cp}/crossplane-system`];
    const xp = config.crossplane;
    const xpDeploy = plan.crossplane;
    this.crossplane = new Crossplane(
      `${name}-crossplane`,
      {
        provider: this.controlPlane.provider,
        namespace: "crossplane-system",
        version: args.crossplanePlan.version,
        chart: args.crossplaneSource.chart,
        crdsPath: args.crossplaneSource.crdsPath,
        packages: {
          providerKubernetes: xp.providerKubernetes,
          providerAnynines: xp.providerAnynines,
          functionPatchAndTransform: xp.functionPatchAndTransform,
          dataservicesConfiguration: xp.dataservicesConfiguration,
          ...(plan.a8sNetworkBindings || plan.a9sNetworkBindings
            ? { functionKlutch: xp.functionKlutch }
            : {}),
        },
        ...crossplaneImages(config, args.crossplanePlan.version, xpDeploy.node !== undefined),
        anyninesServices: xp.anyninesServices,
        anyninesCredentials: args.secrets?.anyninesCredentials,
        installProviderConfigs: xpDeploy.installProviderConfigs,
        skipAwait: xpDeploy.skipAwait,
        runLocally: xpDeploy.runLocally,
        useInstalled: xpDeploy.useInstalled,
        ...(xpDeploy.node ?? {}),
        ...(xpDeploy.localPackages ? { localPackages: xpDeploy.localPackages } : {}),
        kubeconfig: this.controlPlane.kubeconfig,
        labels: plan.labels,
      },
      { parent: this, dependsOn: crossplaneNs ? [crossplaneNs] : [] },
    );
    // The plan's packaging, with the control plane's kubeconfig each package's pause uses.
    const { packaging: plannedPackaging, ...connectorApiPlan } = plan.connectorApi;
    const packaging = plannedPackaging
      ? { packaging: { ...plannedPackaging, kubeconfig: this.controlPlane.kubeconfig } }
      : {};
    this.connectorApi = new NetworkConnectorApi(
      `${name}-connector-api`,
      {
        provider: this.controlPlane.provider,
        ...connectorApiPlan,
        ...packaging,
        labels: plan.labels,
        dependsOn: [this.crossplane],
      },
      { parent: this },
    );

    // Where anynines' backends cannot run: the data-service API with the local backend.
    const dataServices = plan.localDataServices
      ? new LocalDataServices(
          `${name}-data-services`,
          {
            provider: this.controlPlane.provider,
            postgresImage: plan.localDataServices.postgresImage,
            connectionImplementations: this.connectorApi.implementations,
            crossplaneNamespace: "crossplane-system",
            labels: plan.labels,
            ...packaging,
            dependsOn: [this.crossplane, this.connectorApi],
          },
          { parent: this },
        )
      : undefined;

    // Where a8s, or anynines' service brokers, serve the instances: the bindings that add the
    // connector, on Klutch's function.
    const networkBindings = {
      provider: this.controlPlane.provider,
      connectionImplementations: this.connectorApi.implementations,
      labels: plan.labels,
      dependsOn: [this.crossplane, this.connectorApi],
      instanceZones: config.instanceNames.zones,
    };
    const a8s = plan.a8sNetworkBindings
      ? new A8sNetworkBindings(`${name}-a8s-network-bindings`, networkBindings, { parent: this })
      : undefined;
    const a9s = plan.a9sNetworkBindings
      ? new A9sNetworkBindings(`${name}-a9s-network-bindings`, networkBindings, { parent: this })
      : undefined;
    // Where instance names are kept: each app cluster answers them with the paths' addresses.
    for (const server of args.instanceNames ?? []) {
      const app = this.appClusters[server.cluster]!;
      const { cluster, ...settings } = server;
      new InstanceNames(
        `${name}-${cluster}-instance-names`,
        {
          ...settings,
          // A local node is one machine; elsewhere a second replica keeps the names answered.
          replicas: server.imagePullPolicy === "Never" ? 1 : 2,
          provider: app.provider,
          kubeconfig: app.kubeconfig,
          labels: plan.labels,
        },
        { parent: this },
      );
    }
    // A binding to a network-aware composition not offered here is refused when it is written,
    // where it is written (an app cluster, or the control plane), rather than left waiting.
    const offered = offeredNetworkBindings(
      [dataServices, a8s, a9s].flatMap((part) => part?.compositions ?? []),
    );
    const writers = [[cp, this.controlPlane], ...Object.entries(this.appClusters)] as const;
    for (const [cluster, access] of writers)
      new BindingAdmission(
        `${name}-${cluster}-binding-admission`,
        { provider: access.provider, offered, labels: plan.labels },
        { parent: this },
      );

    // The Crossplane bridge: its settings and identity, and its Deployment when planned.
    this.bridge = bridgePart(this, name, {
      config,
      plan,
      controlPlane: this.controlPlane,
      network,
      networkNamespace: namespaces[`${cp}/${SETTINGS_NAMESPACE}`],
      connectorApi: this.connectorApi,
      passphrase: args.secrets?.bridgePassphrase,
      stateCredentials: args.secrets?.bridgeStateCredentials,
    });

    // klutch-bind: OIDC, the backend, the exported APIs, a binding per app cluster.
    const bind = bindPart(this, name, {
      config,
      plan,
      controlPlane: this.controlPlane,
      appClusters: this.appClusters,
      namespaces,
      secrets: args.secrets,
    });
    this.oidc = bind.oidc;
    this.bindBackend = bind.backend;
    this.exportedApis = bind.exportedApis;
    this.bindings = bind.bindings;

    // Created last, deleted first: a destroy releases every claim and what it composed while
    // Crossplane, its providers, the bridge and the konnectors can still do it.
    new TeardownDrain(
      `${name}-teardown-drain`,
      {
        kubeconfig: this.controlPlane.kubeconfig,
        appClusterKubeconfigs: pulumi.all(
          Object.fromEntries(Object.entries(this.appClusters).map(([app, a]) => [app, a.kubeconfig])),
        ),
      },
      {
        parent: this,
        dependsOn: [
          this.crossplane,
          this.connectorApi,
          ...(dataServices ? [dataServices] : []),
          ...(this.bridge ? [this.bridge] : []),
          bind.backend,
          ...Object.values(bind.bindings),
        ],
      },
    );

    this.registerOutputs({ namespaces: this.namespaces });
  }

  /** Per app cluster: its consumer namespace on the control plane and the APIs it binds. */
  public bindingSummary(): pulumi.Output<Record<string, { consumerNamespace: string; apis: string[] }>> {
    return pulumi.output(
      Object.fromEntries(
        Object.entries(this.bindings).map(([app, b]) => [
          app,
          b.consumerNamespace.apply((consumerNamespace) => ({ consumerNamespace, apis: b.boundApis })),
        ]),
      ),
    );
  }

  /** The consumer identities' kubeconfigs for the control plane, by app cluster (a secret). */
  public appClusterKubeconfigs(): pulumi.Output<Record<string, string>> {
    return pulumi.secret(
      pulumi.all(Object.fromEntries(Object.entries(this.bindings).map(([app, b]) => [app, b.kubeconfig]))),
    );
  }
}

/** The names of the created namespaces, by cluster. */
function namespacesByCluster(
  namespaces: Readonly<Record<string, k8s.core.v1.Namespace>>,
): pulumi.Output<Record<string, string[]>> {
  const byCluster: Record<string, pulumi.Output<string>[]> = {};
  for (const [key, ns] of Object.entries(namespaces))
    (byCluster[key.slice(0, key.indexOf("/"))] ??= []).push(ns.metadata.name);
  return pulumi.output(
    Object.fromEntries(Object.entries(byCluster).map(([cluster, names]) => [cluster, pulumi.all(names)])),
  );
}

export type ApiDelivery = "loose" | "adopting" | "packaged";

function withApiDelivery(plan: EnvironmentPlan, delivery: ApiDelivery): EnvironmentPlan {
  const packaging = plan.connectorApi.packaging;
  if (!packaging || delivery === "adopting") return plan;
  const connectorApi = { ...plan.connectorApi };
  if (delivery === "loose") delete connectorApi.packaging;
  else connectorApi.packaging = { ...packaging, looseDeclarations: "none" };
  return { ...plan, connectorApi };
}
