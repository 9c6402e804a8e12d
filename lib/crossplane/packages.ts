/**
 * The Crossplane objects Klutch needs on the control plane, as plain manifests: packages
 * (providers, function, configuration), the runtime config that gives provider-kubernetes a
 * known ServiceAccount, and the ProviderConfigs. Pure, so the component and the tests share it.
 */
import { KLUTCH_FUNCTION } from "../connector-api/compositions";

export interface PackageRefs {
  providerKubernetes: string;
  providerAnynines: string;
  functionPatchAndTransform: string;
  dataservicesConfiguration: string;
  /** Klutch's composition function, where the control plane pulls it (crossplane.functionKlutch). */
  functionKlutch?: string;
}

export interface AnyninesService {
  name: string;
  serviceBrokerUrl: string;
  backupManagerUrl?: string;
}

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: Record<string, unknown>;
}

/** ServiceAccount provider-kubernetes runs as, so its RBAC can be bound by name. */
export const PROVIDER_KUBERNETES_SERVICE_ACCOUNT = "provider-kubernetes";
export const RUNTIME_CONFIG_NAME = "provider-kubernetes";
/**
 * provider-anynines' runtime config, as Klutch installs it (crossplane-api/deploy/
 * provider-anynines.yaml@v1.5.0): the package runtime is ready once /healthz on 8081 answers.
 */
export const ANYNINES_RUNTIME_CONFIG_NAME = "provider-anynines";
/** Klutch names its data-services Configuration so (crossplane-api/deploy/config-pkg-anynines.yaml). */
export const DATASERVICES_CONFIGURATION_NAME = "anynines-dataservices";

export interface PackageOptions {
  /**
   * Turn on provider-kubernetes' `watches` feature (its ENABLE_WATCHES environment variable,
   * cmd/provider/main.go at v0.18.0), which honours `spec.watch` on Objects. Alpha upstream, so
   * only where Klutch's local data services compose Objects that ask for it
   * (programs/composition-function/kubernetes-object.ts): the local stack.
   */
  providerKubernetesWatches?: boolean;
}

/**
 * A DeploymentRuntimeConfig's deploymentTemplate that sets fields of the package's runtime
 * container, which Crossplane's package manager names `package-runtime` and merges by name.
 */
function runtimeContainer(fields: Record<string, unknown>) {
  return {
    deploymentTemplate: {
      spec: { selector: {}, template: { spec: { containers: [{ name: "package-runtime", ...fields }] } } },
    },
  };
}

export function packageManifests(
  refs: PackageRefs,
  labels: Record<string, string>,
  options: PackageOptions = {},
): Manifest[] {
  return [
    {
      apiVersion: "pkg.crossplane.io/v1beta1",
      kind: "DeploymentRuntimeConfig",
      metadata: { name: RUNTIME_CONFIG_NAME, labels },
      spec: {
        serviceAccountTemplate: { metadata: { name: PROVIDER_KUBERNETES_SERVICE_ACCOUNT } },
        ...(options.providerKubernetesWatches
          ? runtimeContainer({ env: [{ name: "ENABLE_WATCHES", value: "true" }] })
          : {}),
      },
    },
    {
      apiVersion: "pkg.crossplane.io/v1",
      kind: "Provider",
      metadata: { name: "provider-kubernetes", labels },
      spec: { package: refs.providerKubernetes, runtimeConfigRef: { name: RUNTIME_CONFIG_NAME } },
    },
    {
      apiVersion: "pkg.crossplane.io/v1beta1",
      kind: "DeploymentRuntimeConfig",
      metadata: { name: ANYNINES_RUNTIME_CONFIG_NAME, labels },
      spec: runtimeContainer({ readinessProbe: { httpGet: { path: "/healthz", port: 8081 } } }),
    },
    {
      apiVersion: "pkg.crossplane.io/v1",
      kind: "Provider",
      metadata: { name: "provider-anynines", labels },
      spec: { package: refs.providerAnynines, runtimeConfigRef: { name: ANYNINES_RUNTIME_CONFIG_NAME } },
    },
    {
      apiVersion: "pkg.crossplane.io/v1",
      kind: "Function",
      metadata: { name: "function-patch-and-transform", labels },
      spec: { package: refs.functionPatchAndTransform },
    },
    {
      apiVersion: "pkg.crossplane.io/v1",
      kind: "Configuration",
      metadata: { name: DATASERVICES_CONFIGURATION_NAME, labels },
      spec: { package: refs.dataservicesConfiguration },
    },
    // Under the name its compositions' functionRef gives (programs/composition-function/input.ts).
    ...(refs.functionKlutch
      ? [
          {
            apiVersion: "pkg.crossplane.io/v1",
            kind: "Function",
            metadata: { name: KLUTCH_FUNCTION.name, labels },
            spec: { package: refs.functionKlutch },
          },
        ]
      : []),
  ];
}

/** Name of the Secret holding one anynines endpoint's credentials. */
export function credentialsSecretName(service: string, part: "serviceBroker" | "backupManager"): string {
  return `${service}-${part === "serviceBroker" ? "service-broker" : "backup-manager"}-credentials`;
}

/**
 * ProviderConfigs: provider-kubernetes with its injected identity, and one anynines config
 * per service endpoint (service broker, backup manager) reading credentials from Secrets.
 */
export function providerConfigManifests(
  services: AnyninesService[],
  namespace: string,
  labels: Record<string, string>,
): Manifest[] {
  const anynines = services.flatMap((svc) => {
    const parts: { part: "serviceBroker" | "backupManager"; url: string; type: string; health: string }[] = [
      {
        part: "serviceBroker",
        url: svc.serviceBrokerUrl,
        type: "servicebroker",
        health: "/osb_ext/v1/healthy",
      },
    ];
    if (svc.backupManagerUrl) {
      parts.push({
        part: "backupManager",
        url: svc.backupManagerUrl,
        type: "backupmanager",
        health: "/v2/healthy",
      });
    }
    return parts.map(({ part, url, type, health }) => {
      const secret = credentialsSecretName(svc.name, part);
      const ref = (key: string) => ({ secretRef: { namespace, name: secret, key } });
      return {
        apiVersion: "dataservices.anynines.com/v1",
        kind: "ProviderConfig",
        metadata: { name: secret.replace(/-credentials$/, ""), labels },
        spec: {
          url,
          serviceType: type,
          healthCheckEndpoint: health,
          providerCredentials: { source: "Secret", username: ref("username"), password: ref("password") },
        },
      };
    });
  });
  return [
    {
      apiVersion: "kubernetes.crossplane.io/v1alpha1",
      kind: "ProviderConfig",
      metadata: { name: "kubernetes-provider", labels },
      spec: { credentials: { source: "InjectedIdentity" } },
    },
    ...anynines,
  ];
}
