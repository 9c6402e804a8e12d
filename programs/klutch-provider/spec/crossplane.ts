import type { ComponentSpec, ObjectType } from "../../../providers/kit/schema-model";
import {
  KUBECONFIG,
  LABELS,
  SKIP_AWAIT,
  bool,
  list,
  map,
  ref,
  secret,
  str,
} from "../../../providers/kit/props";

/** components/crossplane/crossplane.ts as the provider serves it (the config model's `crossplane`). */

export const crossplaneTypes: Record<string, ObjectType> = {
  "klutch:crossplane:AnyninesService": {
    description: "An anynines service broker: one ProviderConfig (and one for its backup manager).",
    properties: {
      name: str("Service type, e.g. postgresql (a DNS-1123 label); names the ProviderConfigs."),
      serviceBrokerUrl: str("The service broker's URL."),
      backupManagerUrl: str("The backup manager's URL; no backup ProviderConfig when omitted."),
    },
    required: ["name", "serviceBrokerUrl"],
  },
  "klutch:crossplane:Credentials": {
    description: "A username and password.",
    properties: { username: str("User name."), password: str("Password.", { secret: true }) },
    required: ["username", "password"],
  },
  "klutch:crossplane:AnyninesCredentials": {
    description: "Credentials of one anynines service.",
    properties: {
      serviceBroker: ref("klutch:crossplane:Credentials", "The service broker's credentials."),
      backupManager: ref(
        "klutch:crossplane:Credentials",
        "The backup manager's credentials (when the service has one).",
      ),
    },
    required: ["serviceBroker"],
  },
};

const pkg = (what: string, version: string) =>
  str(`${what} package, pinned (registry/repository:tag). Default ${version}.`, { plain: true });

export const crossplaneComponents: ComponentSpec[] = [
  {
    token: "klutch:crossplane:Crossplane",
    description:
      "Crossplane core from its Helm chart (with --enable-ssa-claims, as Klutch requires), the packages Klutch needs (provider-kubernetes with RBAC limited to the data services, provider-anynines, function-patch-and-transform, the data-services configuration) and their ProviderConfigs.",
    inputs: {
      kubeconfig: { ...KUBECONFIG, description: "Kubeconfig of the control plane. Kept a secret." },
      namespace: str("Namespace Crossplane runs in; must exist. Default crossplane-system.", { plain: true }),
      version: str(
        "Crossplane core, 2.0.x to 2.4.x, or 1.17.x to 1.20.x (upstream Klutch's line). Default 2.4.0; 1.20.11 with runLocally (a process core runs 1.x only).",
        { plain: true },
      ),
      chartRepository: str("Helm chart repository. Default https://charts.crossplane.io/stable.", {
        plain: true,
      }),
      chartPath: str("A local chart folder instead of the repository.", { plain: true }),
      crdsPath: str(
        "A folder of Crossplane's CRDs to apply first (clusters without a node: no init container does it).",
        { plain: true },
      ),
      toolchainChart: bool(
        "Take the chart and CRDs from this repository's toolchain (as the local stack does); version must be the toolchain's.",
        true,
      ),
      providerKubernetes: pkg(
        "provider-kubernetes",
        "xpkg.upbound.io/crossplane-contrib/provider-kubernetes:v1.3.1",
      ),
      providerAnynines: pkg("provider-anynines", "public.ecr.aws/w5n9a2g2/klutch/provider-anynines:v1.5.0"),
      functionPatchAndTransform: pkg(
        "function-patch-and-transform",
        "xpkg.upbound.io/crossplane-contrib/function-patch-and-transform:v0.9.2",
      ),
      dataservicesConfiguration: pkg(
        "The data-services configuration",
        "public.ecr.aws/w5n9a2g2/klutch/dataservices:v1.5.0",
      ),
      functionKlutch: str(
        "Klutch's composition function package, pinned (registry/repository:tag): the release's function-klutch-v<version>.xpkg pushed to a registry the cluster pulls from. Installed as the Function function-klutch when given.",
        { plain: true },
      ),
      anyninesServices: list(
        ref("klutch:crossplane:AnyninesService", "service"),
        "anynines service brokers, one ProviderConfig each.",
        true,
      ),
      anyninesCredentials: secret(
        map(
          ref("klutch:crossplane:AnyninesCredentials", "credentials"),
          "Credentials per anynines service name. Kept a secret.",
        ),
      ),
      installProviderConfigs: bool(
        "Make the ProviderConfigs (they need the providers' CRDs, which only a Crossplane that pulls packages installs). Default true.",
        true,
      ),
      useInstalled: bool(
        "Install no Crossplane: Klutch's packages, their runtime configs, provider-kubernetes' RBAC and the ProviderConfigs go onto the core the cluster already runs, which destroy leaves. Refused before anything is registered unless exactly one core runs, in namespace, of version's minor, with SSA claims on, no environment's, and no package of the names Klutch installs is someone else's. Not with chartRepository, chartPath, crdsPath, toolchainChart or runLocally. Default false.",
        true,
      ),
      runLocally: bool(
        "Crossplane core runs as a process against the cluster (as on the local clusters), not as the chart's pods: the chart's core and RBAC manager are kept at zero replicas. Default false.",
        true,
      ),
      skipAwait: SKIP_AWAIT,
      labels: LABELS,
    },
    requiredInputs: ["kubeconfig"],
    outputs: {
      namespace: str("Namespace Crossplane runs in."),
      packages: list(
        str("Kind/name"),
        "The package objects made (Provider, Function, Configuration, runtime configs).",
      ),
    },
    requiredOutputs: ["namespace", "packages"],
  },
];
