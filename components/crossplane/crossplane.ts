import * as path from "node:path";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { CrossplaneUpgradeGuard } from "../../providers/dynamic/crossplane-upgrade-guard";
import { CrossplaneWebhookConfigurations } from "../../providers/dynamic/crossplane-webhooks";
import {
  AnyninesService,
  Manifest,
  PROVIDER_KUBERNETES_SERVICE_ACCOUNT,
  PackageRefs,
  credentialsSecretName,
  packageManifests,
  providerConfigManifests,
} from "../../lib/crossplane/packages";
import type { AnyninesCredentials } from "../../lib/crossplane/credentials";
import { FUNCTION_PACKAGE, PROVIDER_KUBERNETES_PACKAGE, type LocalPackages } from "../../lib/local/packages";

/** What moves a local control plane's Crossplane by more than one minor (CrossplaneUpgradeGuard). */
export const LOCAL_UPGRADE_REMEDY =
  "Local clusters run only the cores the toolchain builds (host/toolchain/versions.env), so make the local stack afresh: `npm run down`, then `npm run up`";

/**
 * The ConfigMap and key the chart mounts for the package manager's registry CA bundle
 * (`registryCaBundleConfig` of the crossplane chart, 1.20.11 and 2.4.0 alike: mounted at /certs, CA_BUNDLE_PATH).
 */
export const REGISTRY_CA_CONFIGMAP = "klutch-registry-ca";
export const REGISTRY_CA_KEY = "ca-bundle.crt";

export interface CrossplaneArgs {
  /** Provider of the control plane cluster. */
  provider: k8s.Provider;
  /** Namespace Crossplane runs in (created by the caller; the caller orders it with dependsOn). */
  namespace: string;
  /** Crossplane core version, 1.17.x to 1.20.x. */
  version: string;
  /** Chart source: a Helm repository, or a local chart folder. */
  chart: { repository: string } | { path: string };
  /**
   * CRD folder to apply before the packages. Crossplane's init container does this wherever the
   * chart's pods run; with core as a local process (`runLocally`) the toolchain's copy is
   * applied instead.
   */
  crdsPath?: string;
  packages: PackageRefs;
  anyninesServices: AnyninesService[];
  /** Credentials per anynines service name; a Pulumi secret. */
  anyninesCredentials?: pulumi.Input<Record<string, AnyninesCredentials>>;
  /**
   * ProviderConfigs need the providers' CRDs, which the package manager installs after pulling
   * the packages; clusters that cannot pull (local clusters) skip them.
   */
  installProviderConfigs: boolean;
  /**
   * Do not wait for the chart's workloads and the packages to become ready. Packages are never
   * awaited where they cannot be pulled (`installProviderConfigs: false`).
   */
  skipAwait: boolean;
  /**
   * The image of the chart's core and RBAC manager when it is not the published one: a local
   * node's imported `klutch.local/crossplane` (pull policy `Never`, as nothing can be pulled there).
   */
  image?: { repository: string; tag: string; pullPolicy?: "Never" | "IfNotPresent" | "Always" };
  /**
   * An operator's registry mirror (`klutch:imageRegistry`): an ImageConfig makes Crossplane's
   * package manager pull every package whose reference starts with one of `upstreams` (each a
   * registry host) from the mirror instead, under the same path, the dependencies the packages
   * declare included (ImageConfig `rewriteImage.prefix`, in the CRDs of 1.20.11 and 2.4.0 alike).
   */
  registryMirror?: { registry: string; upstreams: string[] };
  /** Flags added to `crossplane core start` after `--enable-ssa-claims`. */
  coreArgs?: string[];
  /**
   * Crossplane core in the node's network namespace (`hostNetwork`, with cluster DNS): for an
   * API server that cannot reach the pod network, so that it can call Crossplane's webhooks
   * at the node's address (upstream's advice for such clusters, crossplane/crossplane#5520).
   */
  hostNetwork?: boolean;
  /**
   * Crossplane core runs as a process against this cluster (`crossplane.runLocally`, the local
   * clusters' way), not as the chart's pods: the chart's core and RBAC manager Deployments are
   * kept at zero replicas. On a local cluster with a node they would otherwise be scheduled,
   * and where their images can be pulled a second core would reconcile the same objects.
   */
  runLocally?: boolean;
  /**
   * Run on the core the operator installed (`crossplane.useInstalled`, checked before anything is
   * registered: lib/crossplane/installed-crossplane.ts): no chart, upgrade guard, CRDs or webhook
   * clean-up, all of which belong to that core's owner; only the packages, their runtime configs,
   * RBAC and ProviderConfigs, which destroy removes while the core stays.
   */
  useInstalled?: boolean;
  /**
   * The project's own packages (by Function name) on the local registry, and the CA its
   * certificate is from: the package manager trusts that CA and installs them, and Pulumi waits
   * until each is Healthy (its pod runs).
   */
  localPackages?: LocalPackages;
  /**
   * Admin kubeconfig of the cluster (a secret). Given, the webhook configurations Crossplane
   * writes for itself are removed after it on a destroy (providers/dynamic/crossplane-webhooks.ts).
   */
  kubeconfig?: pulumi.Input<string>;
  labels: Record<string, string>;
}

/**
 * Crossplane core from its Helm chart (with `--enable-ssa-claims`, as Klutch requires), the
 * packages Klutch needs, and their ProviderConfigs. Type token `klutch:crossplane:Crossplane`.
 */
export class Crossplane extends pulumi.ComponentResource {
  /** The package objects, for components that must wait for them. */
  public readonly packages: k8s.apiextensions.CustomResource[];
  /** The project's own Functions, installed from the local registry (none elsewhere). */
  public readonly localFunctions: k8s.apiextensions.CustomResource[];

  constructor(name: string, args: CrossplaneArgs, opts?: pulumi.ComponentResourceOptions) {
    super("klutch:crossplane:Crossplane", name, {}, opts);
    const child = { parent: this, provider: args.provider };
    const skipAwait = args.skipAwait ? { "pulumi.com/skipAwait": "true" } : undefined;
    // A package that cannot be pulled never becomes healthy: applied only.
    const packagesSkipAwait =
      args.skipAwait || !args.installProviderConfigs ? { "pulumi.com/skipAwait": "true" } : undefined;

    const registryCa = args.localPackages
      ? new k8s.core.v1.ConfigMap(
          `${name}-registry-ca`,
          {
            metadata: { name: REGISTRY_CA_CONFIGMAP, namespace: args.namespace, labels: args.labels },
            data: { [REGISTRY_CA_KEY]: args.localPackages.caBundle },
          },
          child,
        )
      : undefined;
    const core = args.useInstalled ? [] : this.installCore(name, args, child, registryCa);

    // Packages need Crossplane's CRDs: wait for the chart (its Deployment's init container
    // installs them on a real cluster) or for the CRDs applied above.
    const afterCore = { ...child, dependsOn: core };
    // Before any package: a dependency resolved before it would be pulled from upstream.
    const mirror = args.registryMirror
      ? this.customResource(
          name,
          {
            apiVersion: "pkg.crossplane.io/v1beta1",
            kind: "ImageConfig",
            metadata: { name: "klutch-registry-mirror", labels: args.labels },
            spec: {
              // With the slash: a prefix alone would match another host that starts alike.
              matchImages: args.registryMirror.upstreams.map((u) => ({ type: "Prefix", prefix: `${u}/` })),
              rewriteImage: { prefix: `${args.registryMirror.registry.replace(/\/+$/, "")}/` },
            },
          },
          skipAwait,
          afterCore,
        )
      : undefined;
    const afterMirror = mirror ? { ...child, dependsOn: [...core, mirror] } : afterCore;
    // Installed when its revision is Healthy: the package was pulled and its pod runs.
    const awaitHealthy: Record<string, string> = args.skipAwait
      ? { "pulumi.com/skipAwait": "true" }
      : { "pulumi.com/waitFor": "condition=Healthy" };
    const local = args.localPackages?.references ?? {};
    const localProviderKubernetes = local[PROVIDER_KUBERNETES_PACKAGE.name];
    const refs = localProviderKubernetes
      ? { ...args.packages, providerKubernetes: localProviderKubernetes }
      : args.packages;
    const isProviderKubernetes = (m: Manifest) =>
      m.kind === "Provider" && m.metadata.name === "provider-kubernetes";
    // The local build runs Klutch's local data services, whose Objects ask to be watched.
    const manifests = packageManifests(refs, args.labels, {
      providerKubernetesWatches: localProviderKubernetes !== undefined,
    });
    this.packages = manifests.map((m) =>
      this.customResource(
        name,
        m,
        // The local registry's build of provider-kubernetes can be pulled: awaited like on any cluster.
        localProviderKubernetes && isProviderKubernetes(m) ? awaitHealthy : packagesSkipAwait,
        afterMirror,
      ),
    );

    this.localFunctions = Object.entries(local)
      .filter(([fn]) => fn === FUNCTION_PACKAGE.name)
      .map(([fn, reference]) =>
        this.customResource(
          name,
          {
            apiVersion: "pkg.crossplane.io/v1",
            kind: "Function",
            metadata: { name: fn, labels: args.labels },
            spec: { package: reference },
          },
          awaitHealthy,
          afterMirror,
        ),
      );

    this.providerKubernetesRbac(name, args, child);

    if (args.installProviderConfigs) {
      const secrets = this.credentialSecrets(name, args, child);
      for (const m of providerConfigManifests(args.anyninesServices, args.namespace, args.labels)) {
        this.customResource(name, m, skipAwait, { ...child, dependsOn: [...this.packages, ...secrets] });
      }
    } else if (localProviderKubernetes) {
      // provider-kubernetes from the local registry brings its CRDs: its ProviderConfig can be made
      // once it is Healthy (the anynines ones need provider-anynines, which cannot be pulled here).
      const provider = this.packages.filter((_, i) => isProviderKubernetes(manifests[i]!));
      for (const m of providerConfigManifests([], args.namespace, args.labels))
        this.customResource(name, m, skipAwait, { ...child, dependsOn: provider });
    }
    this.registerOutputs({});
  }

  /**
   * Core from the chart, after the upgrade guard, with the webhook configurations it writes removed
   * after it on destroy; and the CRDs where no core pod's init container applies them.
   */
  private installCore(
    name: string,
    args: CrossplaneArgs,
    child: pulumi.CustomResourceOptions,
    registryCa: k8s.core.v1.ConfigMap | undefined,
  ): pulumi.Resource[] {
    const chartSource =
      "path" in args.chart
        ? { chart: args.chart.path }
        : { chart: "crossplane", version: args.version, repositoryOpts: { repo: args.chart.repository } };
    // Deleted after the chart: what Crossplane's pod wrote and nothing else removes.
    const webhooks = args.kubeconfig
      ? new CrossplaneWebhookConfigurations(
          `${name}-webhook-configurations`,
          { kubeconfig: args.kubeconfig },
          {
            parent: this,
          },
        )
      : undefined;
    // Before the chart: a core more than one minor away is refused while it still runs as it was.
    const upgradeGuard = args.kubeconfig
      ? new CrossplaneUpgradeGuard(
          `${name}-upgrade-guard`,
          {
            kubeconfig: args.kubeconfig,
            namespace: args.namespace,
            version: args.version,
            // The toolchain builds one v2 core and the 1.20 one, so no minor can be stepped through.
            ...(args.localPackages || args.runLocally ? { remedy: LOCAL_UPGRADE_REMEDY } : {}),
          },
          { parent: this },
        )
      : undefined;
    const chart = new k8s.helm.v4.Chart(
      `${name}-chart`,
      {
        ...chartSource,
        namespace: args.namespace,
        skipAwait: args.skipAwait,
        values: {
          image: args.image
            ? {
                repository: args.image.repository,
                tag: args.image.tag,
                ...(args.image.pullPolicy ? { pullPolicy: args.image.pullPolicy } : {}),
              }
            : { tag: `v${args.version}` },
          args: ["--enable-ssa-claims", ...(args.coreArgs ?? [])],
          // On the node's network a new pod cannot start beside the old one (same ports):
          // replace it instead of rolling.
          ...(args.hostNetwork
            ? { hostNetwork: true, dnsPolicy: "ClusterFirstWithHostNet", deploymentStrategy: "Recreate" }
            : {}),
          customLabels: args.labels,
          // The chart renders `replicas: {{ .Values.replicas }}` and
          // `{{ .Values.rbacManager.replicas }}` (templates/deployment.yaml,
          // rbac-manager-deployment.yaml of crossplane 1.20.11 and 2.4.0), so 0 is kept as 0; the RBAC
          // manager's roles stay (rbacManager.deploy).
          ...(args.runLocally ? { replicas: 0, rbacManager: { replicas: 0 } } : {}),
          ...(registryCa
            ? { registryCaBundleConfig: { name: REGISTRY_CA_CONFIGMAP, key: REGISTRY_CA_KEY } }
            : {}),
        },
      },
      { ...child, dependsOn: [registryCa, webhooks, upgradeGuard].filter((r) => r !== undefined) },
    );

    const crds = args.crdsPath
      ? [
          new k8s.yaml.v2.ConfigGroup(
            `${name}-crds`,
            { files: [path.join(args.crdsPath, "*.yaml")], skipAwait: args.skipAwait },
            child,
          ),
        ]
      : [];
    return [chart, ...crds];
  }

  private customResource(
    name: string,
    m: Manifest,
    annotations: Record<string, string> | undefined,
    opts: pulumi.CustomResourceOptions,
  ): k8s.apiextensions.CustomResource {
    const resourceName = `${name}-${m.kind.toLowerCase()}-${m.metadata.name}`;
    return new k8s.apiextensions.CustomResource(
      resourceName,
      { apiVersion: m.apiVersion, kind: m.kind, metadata: { ...m.metadata, annotations }, spec: m.spec },
      opts,
    );
  }

  /**
   * provider-kubernetes acts with its injected identity; this grants it exactly the objects
   * Klutch's compositions hand it (a8s data services and what their bindings produce), not
   * cluster-admin.
   */
  private providerKubernetesRbac(
    name: string,
    args: CrossplaneArgs,
    opts: pulumi.CustomResourceOptions,
  ): void {
    const verbs = ["get", "list", "watch", "create", "update", "patch", "delete"];
    const role = new k8s.rbac.v1.ClusterRole(
      `${name}-provider-kubernetes`,
      {
        metadata: { name: "klutch:provider-kubernetes", labels: args.labels },
        rules: [
          { apiGroups: [""], resources: ["secrets", "configmaps", "services"], verbs },
          { apiGroups: ["postgresql.anynines.com"], resources: ["postgresqls"], verbs },
          { apiGroups: ["servicebindings.anynines.com"], resources: ["servicebindings"], verbs },
          { apiGroups: ["backups.anynines.com"], resources: ["backups", "restores"], verbs },
        ],
      },
      opts,
    );
    new k8s.rbac.v1.ClusterRoleBinding(
      `${name}-provider-kubernetes`,
      {
        metadata: { name: "klutch:provider-kubernetes", labels: args.labels },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role.metadata.name },
        subjects: [
          { kind: "ServiceAccount", name: PROVIDER_KUBERNETES_SERVICE_ACCOUNT, namespace: args.namespace },
        ],
      },
      opts,
    );
  }

  private credentialSecrets(
    name: string,
    args: CrossplaneArgs,
    opts: pulumi.CustomResourceOptions,
  ): k8s.core.v1.Secret[] {
    const creds = pulumi.secret(args.anyninesCredentials ?? {});
    return args.anyninesServices.flatMap((svc) => {
      const parts: ("serviceBroker" | "backupManager")[] = svc.backupManagerUrl
        ? ["serviceBroker", "backupManager"]
        : ["serviceBroker"];
      return parts.map(
        (part) =>
          new k8s.core.v1.Secret(
            `${name}-${credentialsSecretName(svc.name, part)}`,
            {
              metadata: {
                name: credentialsSecretName(svc.name, part),
                namespace: args.namespace,
                labels: args.labels,
              },
              type: "Opaque",
              stringData: pulumi.secret(
                creds.apply((c) => {
                  const entry = c[svc.name]?.[part];
                  if (!entry) throw new Error(`no credentials for ${svc.name}.${part}`);
                  return { username: entry.username, password: entry.password };
                }),
              ),
            },
            opts,
          ),
      );
    });
  }
}
