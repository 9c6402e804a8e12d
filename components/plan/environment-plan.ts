import type { EnvironmentConfig } from "../config/schema";
import { boundApis } from "../../lib/bind/app-cluster-plan";
import { backendUrls, type BackendUrls } from "../../lib/bind/backend-plan";
import { releaseImages } from "../../lib/bind/upstream/release";
import type { BridgePlan } from "../../lib/bridge/bridge-plan";
import type { ExportedApiConfig } from "../../lib/config/schema";
import { LOCAL_CORE_FLAGS, type CrossplanePlan, type ImageRef } from "../../lib/crossplane/crossplane-plan";
import { environmentLabels, plannedNamespaces, type NamespacePlan } from "../../lib/environment-plan";
import { KLUTCH_FUNCTION, type PipelineFunction } from "../../lib/connector-api/compositions";
import type { LocalPackages } from "../../lib/local/packages";
import { packageSource, type ApiPackaging } from "../../lib/crossplane/configuration-package";
import { DEFAULT_IMPLEMENTATION, implementationSpec, realisationOf } from "../../network/registry";

/**
 * What a whole Klutch environment builds, decided from the config alone: the plan that
 * components/environment.ts hands to its parts (components/environment/). Pure, so each
 * decision is tested here without Pulumi (environment-plan.test.ts).
 */
export interface EnvironmentPlan {
  /** Every object of the environment carries them, so `kubectl get -l` finds them all. */
  labels: Record<string, string>;
  /** The namespaces later parts place objects in, per cluster. */
  namespaces: NamespacePlan[];
  /**
   * Upstream images (Dex, the klutch-bind backend, the konnector) cannot run on local clusters
   * (no registry to pull from): their objects are applied, not awaited.
   */
  skipAwaitUpstream: boolean;
  crossplane: CrossplaneDeployment;
  connectorApi: {
    /** Every implementation an app cluster uses, plus the registry's default; none nobody realises. */
    implementations: string[];
    defaultImplementation: string;
    /**
     * Pipeline where a function can run: function-patch-and-transform where packages can be
     * pulled, Klutch's own function from the local registry on a local node; the function-less
     * form for a core without a node.
     */
    compositionMode: "Pipeline" | "Resources";
    pipelineFunction?: PipelineFunction;
    /**
     * Where the environment has a registry of its own (a local node's): the API ships as a
     * Configuration package pushed there, not as loose objects.
     */
    packaging?: ApiPackaging;
  };
  /**
   * The data-service API where anynines' backends cannot run (a local node): upstream's XRDs, the
   * local backend and the network-aware binding (components/dataservices).
   */
  localDataServices?: { postgresImage: string };
  /**
   * The network-aware ServiceBinding compositions where a8s serves the instances: a control plane
   * that pulls packages, given Klutch's function (crossplane.functionKlutch).
   */
  a8sNetworkBindings?: true;
  /**
   * The same for every service type where anynines' service brokers serve the instances: given
   * Klutch's function and some crossplane.anyninesServices (whose ProviderConfigs they bind on).
   */
  a9sNetworkBindings?: true;
  bridge: {
    /** Whether the bridge's data-plane identity may list nodes (some implementation reports a node's address). */
    listNodes: boolean;
    /** Some app cluster's paths read instance endpoints (the proxy: its kernel hop follows them, its health reader judges them). */
    readInstances: boolean;
    /** Some app cluster's paths write their own EndpointSlices (the proxy's kernel hop). */
    writeSlices: boolean;
    /** The bridge Deployment, when the config deploys it. */
    deployment?: BridgePlan;
  };
  bind: {
    urls: BackendUrls;
    appClusters: AppClusterBindingPlan[];
  };
}

/** How Crossplane is deployed (components/crossplane/crossplane.ts), from the Crossplane plan. */
export interface CrossplaneDeployment {
  /** A Crossplane that cannot pull packages never gets the providers' CRDs: its packages are applied only. */
  installProviderConfigs: boolean;
  /** Core as a local process: the chart's pods stay at zero replicas, so nothing of theirs is awaited. */
  skipAwait: boolean;
  runLocally: boolean;
  /** The operator's core (`crossplane.useInstalled`): no chart; only the packages and their RBAC. */
  useInstalled: boolean;
  /** Core as a pod of a local node, from the node's image. */
  node?: { image: ImageRef & { pullPolicy: "Never" }; coreArgs: string[]; hostNetwork: true };
  /** The project's own packages from the local registry, which a node's Crossplane installs. */
  localPackages?: LocalPackages;
}

export interface AppClusterBindingPlan {
  name: string;
  apis: ExportedApiConfig[];
  konnectorImage: string;
  /** Wait until the backend answers the binding's exports; never where no backend can run. */
  awaitExports: boolean;
  /** The OIDC subject the binding's namespace is filed under for the backend's lookup. */
  bindSubject?: string;
}

/** Whether some app cluster's implementation asks the bridge's data-plane identity for this right. */
function someAppClusterNeeds(
  config: Pick<EnvironmentConfig, "appClusters">,
  need: "needsNodeList" | "needsInstanceReads" | "needsSliceWrites",
): boolean {
  return config.appClusters.some(
    (a) => implementationSpec(a.networkConnector.implementation)?.[need]?.(a.networkConnector) ?? false,
  );
}

/** The local backend where the control plane's node holds a PostgreSQL image to run. */
function localDataServices(crossplane: CrossplanePlan): Pick<EnvironmentPlan, "localDataServices"> {
  const postgresImage = crossplane.run.kind === "node" ? crossplane.run.node.images.postgres : undefined;
  return postgresImage ? { localDataServices: { postgresImage } } : {};
}

export function planEnvironment(
  config: EnvironmentConfig,
  crossplane: CrossplanePlan,
  bridge?: BridgePlan,
): EnvironmentPlan {
  const skipAwaitUpstream = config.controlPlane.infrastructure === "local";
  const used = config.appClusters.map((a) => a.networkConnector.implementation);
  return {
    labels: environmentLabels(config.environment),
    namespaces: plannedNamespaces(config),
    skipAwaitUpstream,
    crossplane: crossplaneDeployment(crossplane),
    connectorApi: {
      // One nobody realises (NOOP) gets its marker composition from the API anyway.
      implementations: [...new Set([DEFAULT_IMPLEMENTATION, ...used])].filter(
        (i) => realisationOf(i) !== "ignored",
      ),
      defaultImplementation: DEFAULT_IMPLEMENTATION,
      ...compositionForm(crossplane),
      ...packaging(crossplane),
    },
    ...localDataServices(crossplane),
    ...(crossplane.packagesPullable && config.crossplane.functionKlutch
      ? { a8sNetworkBindings: true as const }
      : {}),
    ...(crossplane.packagesPullable &&
    config.crossplane.functionKlutch &&
    config.crossplane.anyninesServices.length > 0
      ? { a9sNetworkBindings: true as const }
      : {}),
    bridge: {
      listNodes: someAppClusterNeeds(config, "needsNodeList"),
      readInstances: someAppClusterNeeds(config, "needsInstanceReads"),
      writeSlices: someAppClusterNeeds(config, "needsSliceWrites"),
      ...(bridge ? { deployment: bridge } : {}),
    },
    bind: {
      urls: backendUrls(config.bind, config.oidc),
      appClusters: config.appClusters.map((app) => ({
        name: app.name,
        apis: boundApis(app, config.exportedApis),
        konnectorImage: config.bind.konnectorImage ?? releaseImages(config.bind.version).konnector,
        awaitExports: config.bind.awaitExports ?? !skipAwaitUpstream,
        ...(app.bindSubject ? { bindSubject: app.bindSubject } : {}),
      })),
    },
  };
}

function compositionForm(
  plan: CrossplanePlan,
): Pick<EnvironmentPlan["connectorApi"], "compositionMode" | "pipelineFunction"> {
  if (plan.packagesPullable) return { compositionMode: "Pipeline" };
  if (plan.run.kind === "node") return { compositionMode: "Pipeline", pipelineFunction: KLUTCH_FUNCTION };
  return { compositionMode: "Resources" };
}

/**
 * A local node's registry holds Klutch's function, so the APIs that compose with it ship as
 * packages that depend on it: by its source (the reference without tag, as Crossplane's lock
 * names it) and any version, the function's tags being `v<version>-g<content>` pre-releases.
 */
function packaging(plan: CrossplanePlan): { packaging?: ApiPackaging } {
  if (plan.run.kind !== "node" || !plan.run.packages) return {};
  const fn = plan.run.packages.references[KLUTCH_FUNCTION.name];
  if (!fn) return {};
  return {
    packaging: {
      registry: {
        address: plan.run.packages.registry,
        pushAddress: plan.run.packages.pushRegistry,
        caBundle: plan.run.packages.caBundle,
      },
      dependsOn: [{ function: packageSource(fn), version: ">=v0.0.0-0" }],
      // The release that introduced packages; `none` from the next one (api-objects.ts).
      looseDeclarations: "retained",
    },
  };
}

function crossplaneDeployment(plan: CrossplanePlan): CrossplaneDeployment {
  const runLocally = plan.run.kind === "process";
  return {
    installProviderConfigs: plan.packagesPullable,
    // Awaited where the chart's pods run (a node's image, or the published one).
    skipAwait: runLocally,
    // The local process is the core: the chart's pods would be a second one on a node.
    runLocally,
    useInstalled: plan.run.kind === "installed",
    ...(plan.run.kind === "node"
      ? {
          node: {
            image: { ...plan.run.image, pullPolicy: "Never" as const },
            coreArgs: [...LOCAL_CORE_FLAGS],
            // A local API server runs on the host, outside the pod network; it calls Crossplane's
            // webhooks at their endpoints (--enable-aggregator-routing), which in the node's
            // network namespace is the node's own address.
            hostNetwork: true as const,
          },
          localPackages: plan.run.packages,
        }
      : {}),
  };
}
