import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { ClusterConfig } from "../lib/config/schema";
import type { EnvironmentConfig } from "../config/schema";
import { localKubeconfigPath } from "../config/validate";
import { environmentLabels, plannedNamespaces } from "../lib/environment-plan";
import { ExistingCluster } from "./clusters/existing-cluster";
import { LocalCluster } from "./clusters/local-cluster";
import { ClusterAccess } from "./clusters/types";
import * as path from "node:path";
import type { AnyninesCredentials } from "../lib/crossplane/credentials";
import { Crossplane } from "./crossplane/crossplane";
import { NetworkConnectorApi } from "./connector-api/connector-api";
import { backendUrls } from "../lib/bind/backend-plan";
import { clusterEndpoint } from "../lib/bind/cluster-endpoint";
import { KlutchBindBackend } from "./bind/bind-backend";
import { ExportedApi } from "./bind/exported-api";
import { OidcProvider } from "./bind/oidc-provider";
import { AppClusterBinding } from "./bind/app-cluster-binding";
import { boundApis } from "../lib/bind/app-cluster-plan";
import { releaseImages } from "../lib/bind/upstream/release";
import { AwsCluster } from "./clusters/aws/aws-cluster";
import { OpenstackCluster } from "./clusters/openstack/openstack-cluster";
import { buildNetworkPaths, type NetworkPaths } from "../network/plugins/environments";
import { BridgeIdentity } from "./bridge/bridge-identity";
import { BridgeSettings } from "./bridge/bridge-settings";
import { BridgeDataPlane } from "./bridge/bridge-data-plane";
import { BridgeDeployment } from "./bridge/bridge-deployment";
import type { BridgePlan } from "../lib/bridge/bridge-plan";
import { LOCAL_CORE_FLAGS, type CrossplanePlan } from "../lib/crossplane/crossplane-plan";
import type { CrossplaneSource } from "../automation/crossplane-source";
import {
  LEADER_LEASE,
  SETTINGS_CONFIGMAP,
  SETTINGS_KEY,
  SETTINGS_NAMESPACE,
  renderBridgeSettings,
} from "../lib/bridge/settings";
import { DEFAULT_IMPLEMENTATION, implementationSpec, realisationOf } from "../network/registry";
import { bridgeSettings } from "../network/plugins/bridge-settings";

/** The secret settings, wrapped as Pulumi secrets so they never reach state or logs in plain text. */
export interface EnvironmentSecrets {
  oidcClientSecret?: pulumi.Output<string>;
  bindCookieSigningKey?: pulumi.Output<string>;
  bindCookieEncryptionKey?: pulumi.Output<string>;
  bindTlsCertificate?: pulumi.Output<string>;
  bindTlsKey?: pulumi.Output<string>;
  anyninesCredentials?: pulumi.Output<Record<string, AnyninesCredentials>>;
  bridgePassphrase?: pulumi.Output<string>;
}

export interface KlutchEnvironmentArgs {
  /** The validated environment config (config/validate.ts). */
  config: EnvironmentConfig;
  /** Secret settings, already Pulumi secrets. */
  secrets?: EnvironmentSecrets;
  /** Where Crossplane's chart (and, for local clusters, its CRDs) come from; resolved by the caller. */
  crossplaneSource: CrossplaneSource;
  /** How Crossplane core runs (lib/crossplane/crossplane-plan.ts). */
  crossplanePlan: CrossplanePlan;
  /** Directory that relative paths in the config are resolved against. */
  projectDir: string;
  /** The bridge Deployment to deploy (lib/bridge/bridge-plan.ts); none when undefined. */
  bridge?: BridgePlan;
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
    const labels = environmentLabels(config.environment);

    this.controlPlane = this.cluster(`${name}-${config.controlPlane.name}`, config.controlPlane, args);
    this.appClusters = Object.fromEntries(
      config.appClusters.map((app) => [app.name, this.cluster(`${name}-${app.name}`, app, args)]),
    );
    const byName: Record<string, ClusterAccess> = {
      ...this.appClusters,
      [config.controlPlane.name]: this.controlPlane,
    };

    const created: Record<string, pulumi.Output<string>[]> = {};
    const namespaceResources: Record<string, k8s.core.v1.Namespace> = {};
    for (const plan of plannedNamespaces(config)) {
      const cluster = byName[plan.cluster];
      if (!cluster) throw new Error(`internal: no cluster ${plan.cluster}`);
      const ns = new k8s.core.v1.Namespace(
        `${name}-${plan.cluster}-${plan.namespace}`,
        { metadata: { name: plan.namespace, labels } },
        { parent: this, provider: cluster.provider },
      );
      (created[plan.cluster] ??= []).push(ns.metadata.name);
      namespaceResources[`${plan.cluster}/${plan.namespace}`] = ns;
    }
    const network = buildNetworkPaths({
      name,
      config,
      controlPlane: this.controlPlane,
      appClusters: this.appClusters,
      parent: this,
      namespaces: namespaceResources,
    });
    this.networkPaths = network.paths;
    this.namespaces = pulumi.output(
      Object.fromEntries(Object.entries(created).map(([cluster, names]) => [cluster, pulumi.all(names)])),
    );

    const xp = config.crossplane;
    const xpPlan = args.crossplanePlan;
    const crossplaneNs = namespaceResources[`${config.controlPlane.name}/crossplane-system`];
    this.crossplane = new Crossplane(
      `${name}-crossplane`,
      {
        provider: this.controlPlane.provider,
        namespace: "crossplane-system",
        version: xp.version,
        chart: args.crossplaneSource.chart,
        crdsPath: args.crossplaneSource.crdsPath,
        packages: {
          providerKubernetes: xp.providerKubernetes,
          providerAnynines: xp.providerAnynines,
          functionPatchAndTransform: xp.functionPatchAndTransform,
          dataservicesConfiguration: xp.dataservicesConfiguration,
        },
        anyninesServices: xp.anyninesServices,
        anyninesCredentials: args.secrets?.anyninesCredentials,
        // A Crossplane that cannot pull packages never gets the providers' CRDs; its packages
        // are applied only.
        installProviderConfigs: xpPlan.packagesPullable,
        // Awaited where the chart's pods run (a node's image, or the published one); with core
        // as a local process they are at zero replicas, and the chart's webhook Service would
        // wait for endpoints forever.
        skipAwait: xpPlan.run.kind === "process",
        // The local process is the core: the chart's pods would be a second one on a node.
        runLocally: xpPlan.run.kind === "process",
        ...(xpPlan.run.kind === "node"
          ? {
              image: { ...xpPlan.run.image, pullPolicy: "Never" as const },
              coreArgs: LOCAL_CORE_FLAGS,
              // A local API server runs on the host, outside the pod network; it calls
              // Crossplane's webhooks at their endpoints (--enable-aggregator-routing), which
              // in the node's network namespace is the node's own address.
              hostNetwork: true,
            }
          : {}),
        labels,
      },
      { parent: this, dependsOn: crossplaneNs ? [crossplaneNs] : [] },
    );

    // Every implementation an app cluster uses, plus the registry's default (Klutch's: the
    // proxy); one nobody realises (NOOP) gets its marker composition from the API anyway.
    const implementations = [
      ...new Set([
        DEFAULT_IMPLEMENTATION,
        ...config.appClusters.map((a) => a.networkConnector.implementation),
      ]),
    ].filter((i) => realisationOf(i) !== "ignored");
    this.connectorApi = new NetworkConnectorApi(
      `${name}-connector-api`,
      {
        provider: this.controlPlane.provider,
        implementations,
        defaultImplementation: DEFAULT_IMPLEMENTATION,
        // Pipeline mode needs function-patch-and-transform, a package: where none can be pulled,
        // the same compositions in Crossplane's function-less form.
        compositionMode: xpPlan.packagesPullable ? "Pipeline" : "Resources",
        labels,
        dependsOn: [this.crossplane],
      },
      { parent: this },
    );

    // What the Crossplane bridge needs on the control plane: its identity, and each app
    // cluster's network connector settings, keyed by the consumer namespace its claims land in.
    const networkNs = namespaceResources[`${config.controlPlane.name}/${SETTINGS_NAMESPACE}`];
    const bridgeSettingsMap = new BridgeSettings(
      `${name}-bridge-settings`,
      {
        kubeconfig: this.controlPlane.kubeconfig,
        context: config.controlPlane.kubeconfig?.context,
        namespace: SETTINGS_NAMESPACE,
        configMapName: SETTINGS_CONFIGMAP,
        key: SETTINGS_KEY,
        // With what the implementations' environment sides learnt once built (the WireGuard
        // tunnel's addresses).
        settings: network.plannedSettings.apply((planned) =>
          renderBridgeSettings(bridgeSettings(config, planned)),
        ),
        labels,
      },
      { parent: this, dependsOn: networkNs ? [networkNs] : [] },
    );
    const bridgeIdentity = new BridgeIdentity(
      `${name}-bridge-identity`,
      {
        provider: this.controlPlane.provider,
        namespace: SETTINGS_NAMESPACE,
        coordination: { namespace: SETTINGS_NAMESPACE, settings: SETTINGS_CONFIGMAP, lease: LEADER_LEASE },
        labels,
      },
      { parent: this, dependsOn: networkNs ? [networkNs] : [] },
    );
    const plan = args.bridge;
    if (plan) {
      if (!args.secrets?.bridgePassphrase)
        throw new Error(
          "internal: the bridge is deployed without klutch:bridgePassphrase (validation checks it)",
        );
      // The data services, and so the proxies, live in the control plane's cluster: the bridge
      // builds them there as an identity of their namespace only.
      const dataPlane = new BridgeDataPlane(
        `${name}-bridge-data-plane`,
        {
          provider: this.controlPlane.provider,
          namespace: SETTINGS_NAMESPACE,
          labels,
          listNodes: config.appClusters.some(
            (a) =>
              implementationSpec(a.networkConnector.implementation)?.needsNodeList?.(a.networkConnector) ??
              false,
          ),
        },
        { parent: this, dependsOn: networkNs ? [networkNs] : [] },
      );
      this.bridge = new BridgeDeployment(
        `${name}-bridge`,
        {
          provider: this.controlPlane.provider,
          namespace: SETTINGS_NAMESPACE,
          serviceAccountName: bridgeIdentity.serviceAccountName,
          image: plan.image,
          imagePullPolicy: plan.imagePullPolicy,
          replicas: plan.replicas,
          state: plan.state,
          passphrase: args.secrets.bridgePassphrase,
          dataPlaneKubeconfig: dataPlane.kubeconfig,
          bridgeFlags: plan.flags,
          labels,
        },
        {
          parent: this,
          // Its leader watches NetworkPaths (the connector API's CRD) and reads the settings;
          // its pods are Ready only once that watch runs, which Pulumi waits for.
          dependsOn: [
            bridgeIdentity,
            bridgeSettingsMap,
            dataPlane,
            this.connectorApi,
            ...(networkNs ? [networkNs] : []),
          ],
        },
      );
    }

    // Applied only on local clusters, node or not: Dex, the klutch-bind backend and the
    // konnector are upstream images a local node cannot pull (no registry), so their pods never
    // become Ready there. What this project builds (the bridge, its proxies) runs from images
    // the node imported and is awaited (args.bridge above).
    const skipAwait = config.controlPlane.infrastructure === "local";
    const bindNs = namespaceResources[`${config.controlPlane.name}/bind`];
    const urls = backendUrls(config.bind, config.oidc);
    this.oidc = new OidcProvider(
      `${name}-oidc`,
      {
        provider: this.controlPlane.provider,
        namespace: "bind",
        oidc: config.oidc,
        issuerUrl: urls.issuerUrl,
        callbackUrl: urls.callbackUrl,
        clientName: config.bind.prettyName,
        clientSecret: args.secrets?.oidcClientSecret,
        keyRotation: config.bind.keyRotation,
        labels,
        skipAwait,
      },
      { parent: this, dependsOn: bindNs ? [bindNs] : [] },
    );
    // The address and CA konnectors use are public facts of the control plane's
    // kubeconfig; taking them out of the (secret) kubeconfig must not carry its secrecy.
    const cpContext = config.controlPlane.kubeconfig?.context;
    const endpoint = pulumi.unsecret(
      this.controlPlane.kubeconfig.apply((k) => clusterEndpoint(k, cpContext)),
    );
    const apiServer = endpoint.apply((e) => ({
      address: config.bind.apiServerAddress ?? e.server,
      caPem: e.caPem ?? "",
    }));
    this.bindBackend = new KlutchBindBackend(
      `${name}-bind`,
      {
        provider: this.controlPlane.provider,
        bind: config.bind,
        urls,
        exportedApis: config.exportedApis,
        oidc: {
          clientId: this.oidc.clientId,
          clientSecret: this.oidc.clientSecret,
          dexService: this.oidc.service,
        },
        apiServer,
        cookieSigningKey: args.secrets?.bindCookieSigningKey,
        cookieEncryptionKey: args.secrets?.bindCookieEncryptionKey,
        tls:
          args.secrets?.bindTlsCertificate && args.secrets.bindTlsKey
            ? { certificate: args.secrets.bindTlsCertificate, key: args.secrets.bindTlsKey }
            : undefined,
        createNamespace: false,
        namespace: "bind",
        labels,
        skipAwait,
      },
      { parent: this, dependsOn: bindNs ? [bindNs] : [] },
    );
    // Klutch's backend looks for templates in crossplane-system (seed 004).
    this.exportedApis = config.exportedApis.map(
      (api) =>
        new ExportedApi(
          `${name}-export-${api.resource}`,
          { provider: this.controlPlane.provider, namespace: "crossplane-system", api, labels },
          { parent: this, dependsOn: [...this.bindBackend.crds, ...(crossplaneNs ? [crossplaneNs] : [])] },
        ),
    );

    this.bindings = Object.fromEntries(
      config.appClusters.map((app) => {
        const appNs = namespaceResources[`${app.name}/klutch-bind`];
        const binding = new AppClusterBinding(
          `${name}-${app.name}-binding`,
          {
            appCluster: app.name,
            controlPlaneProvider: this.controlPlane.provider,
            controlPlaneKubeconfig: this.controlPlane.kubeconfig,
            appClusterProvider: this.appClusters[app.name]!.provider,
            namespacePrefix: config.bind.namespacePrefix,
            prettyName: config.bind.prettyName,
            apis: boundApis(app, config.exportedApis),
            controlPlane: apiServer,
            release: config.bind.version,
            konnectorImage: config.bind.konnectorImage ?? releaseImages(config.bind.version).konnector,
            // Where no backend can run (local clusters), nothing would answer the requests.
            awaitExports: config.bind.awaitExports ?? !skipAwait,
            createKonnectorNamespace: false,
            controlPlaneDependsOn: this.bindBackend.crds,
            labels,
            skipAwait,
          },
          { parent: this, dependsOn: appNs ? [appNs] : [] },
        );
        return [app.name, binding];
      }),
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

  private cluster(name: string, config: ClusterConfig, args: KlutchEnvironmentArgs): ClusterAccess {
    switch (config.infrastructure) {
      case "local":
        return new LocalCluster(
          name,
          {
            clusterName: config.name,
            kubeconfigPath: localKubeconfigPath(
              args.projectDir,
              args.config.localClusters.stateDir,
              config.name,
            ),
          },
          { parent: this },
        );
      case "existing":
        if (!config.kubeconfig)
          throw new Error(`internal: ${config.name} has no kubeconfig (validation should have caught this)`);
        return new ExistingCluster(
          name,
          {
            clusterName: config.name,
            kubeconfigPath: path.resolve(args.projectDir, config.kubeconfig.path),
            context: config.kubeconfig.context,
          },
          { parent: this },
        );
      case "aws":
        if (!config.aws || !config.network)
          throw new Error(
            `internal: ${config.name} has no aws or network settings (validation should have caught this)`,
          );
        return new AwsCluster(
          name,
          {
            clusterName: config.name,
            aws: config.aws,
            vpcCidr: config.network.nodeCidr,
            eksName: `${args.config.environment}-${config.name}`,
            tags: { "klutch.anynines.com/environment": args.config.environment },
          },
          { parent: this },
        );
      case "openstack":
        if (!config.openstack || !config.network)
          throw new Error(
            `internal: ${config.name} has no openstack or network settings (validation should have caught this)`,
          );
        return new OpenstackCluster(
          name,
          {
            clusterName: config.name,
            openstack: config.openstack,
            cidr: config.network.nodeCidr,
            kubeconfigPath: config.kubeconfig
              ? path.resolve(args.projectDir, config.kubeconfig.path)
              : undefined,
            kubeconfigContext: config.kubeconfig?.context,
          },
          { parent: this },
        );
    }
  }
}
