import { BIND_RELEASES } from "../../../lib/bind/upstream/release";
import type { ComponentSpec, ObjectType } from "../../../providers/kit/schema-model";
import {
  KUBECONFIG,
  LABELS,
  SKIP_AWAIT,
  bool,
  int,
  list,
  ref,
  secret,
  str,
} from "../../../providers/kit/props";

/**
 * The klutch-bind components as the provider serves them: the backend, its OIDC provider and
 * one app cluster's binding (components/bind/). Settings the config model has under `bind` and
 * `oidc` are flat, typed inputs here; the config model's own checks run on them.
 */

export const bindTypes: Record<string, ObjectType> = {
  "klutch:bind:Api": {
    description: "A data-service API (an exported API's group, version, resource and claims).",
    properties: {
      group: str("API group, e.g. anynines.com."),
      version: str("API version, e.g. v1."),
      resource: str("Plural lowercase resource, e.g. postgresqlinstances."),
      kind: str("Kind, e.g. PostgresqlInstance."),
      permissionClaims: list(
        ref("klutch:bind:PermissionClaim", "claim"),
        "Objects that travel with the API.",
      ),
    },
    required: ["group", "version", "resource"],
  },
  "klutch:bind:DexConnector": {
    description: "A Dex connector (an upstream identity provider), as in Dex's own config.",
    properties: {
      type: str("Connector type, e.g. github, oidc, ldap."),
      id: str("Connector id."),
      name: str("Name shown on the login page."),
      config: { type: "any", description: "The connector's settings, as Dex documents them for its type." },
    },
    required: ["type", "id", "name"],
  },
};

const EXTERNAL_ADDRESS = str(
  "Where app clusters reach the klutch-bind backend (https). Default https://bind.klutch.localhost.",
  { plain: true },
);
const RELEASE = str("The klutch-bind release (images, CRDs, flags). Default v1.4.0.", {
  plain: true,
  enum: BIND_RELEASES,
});
const APIS = (description: string) => list(ref("klutch:bind:Api", "api"), description, true);

export const bindComponents: ComponentSpec[] = [
  {
    token: "klutch:bind:KlutchBindBackend",
    description:
      "The klutch-bind backend on the control plane: the bind CRDs, its namespace, an identity with RBAC limited to what it does, the Deployment with its flags, the Secrets (OIDC client, cookie keys, the API server CA), the Service and its Ingress or Gateway.",
    inputs: {
      kubeconfig: { ...KUBECONFIG, description: "Kubeconfig of the control plane. Kept a secret." },
      namespace: str("The backend's namespace. Default bind.", { plain: true }),
      createNamespace: bool("Create the namespace (false when it exists). Default true.", true),
      exportedApis: APIS("The APIs offered for binding (the backend's RBAC covers exactly these)."),
      externalAddress: EXTERNAL_ADDRESS,
      version: RELEASE,
      image: str("The backend's image; the release's when omitted.", { plain: true }),
      authorizeUrl: str(
        "The /authorize URL `kubectl bind` opens (https); <externalAddress>/authorize when omitted.",
        {
          plain: true,
        },
      ),
      namespacePrefix: str("Prefix of the consumer namespaces (<prefix>-<app cluster>). Default cluster.", {
        plain: true,
      }),
      prettyName: str("Name shown to users. Default Klutch.", { plain: true }),
      consumerScope: str("Scope of consumer objects. Default Namespaced.", {
        plain: true,
        enum: ["Namespaced", "Cluster"],
      }),
      exposure: str("How the backend is exposed at externalAddress. Default ingress.", {
        plain: true,
        enum: ["ingress", "gateway", "none"],
      }),
      ingressClassName: str("IngressClass for exposure ingress. Default nginx.", { plain: true }),
      gatewayClassName: str("GatewayClass for exposure gateway. Default nginx.", { plain: true }),
      tlsSource: str("Where the TLS certificate comes from. Default cert-manager.", {
        plain: true,
        enum: ["cert-manager", "provided"],
      }),
      tlsIssuer: str("cert-manager issuer (tlsSource cert-manager). Default letsencrypt.", { plain: true }),
      tlsIssuerKind: str("Kind of that issuer. Default ClusterIssuer.", {
        plain: true,
        enum: ["Issuer", "ClusterIssuer"],
      }),
      tlsCertificate: str("PEM certificate (tlsSource provided). Kept a secret.", { secret: true }),
      tlsKey: str("PEM private key (tlsSource provided). Kept a secret.", { secret: true }),
      replicas: int("Backend pods; must be 1 (the backend has no leader election). Default 1.", true),
      keyRotation: str("Change to make new generated cookie keys (users log in again). Default initial.", {
        plain: true,
      }),
      cookieSigningKey: str("base64 of 32 random bytes; generated (and kept secret) when omitted.", {
        secret: true,
      }),
      cookieEncryptionKey: str("base64 of 16, 24 or 32 random bytes; generated when omitted.", {
        secret: true,
      }),
      oidcIssuerUrl: str(
        "The OIDC issuer the backend trusts (https); <externalAddress>/dex, Dex served on the backend's host, when omitted.",
        { plain: true },
      ),
      oidcClientId: str("The OIDC client id (an OidcProvider's clientId output)."),
      oidcClientSecret: str(
        "The OIDC client secret (an OidcProvider's clientSecret output). Kept a secret.",
        {
          secret: true,
        },
      ),
      dexServiceName: str(
        "Dex's Service, routed under /dex of the backend's host when the issuer is derived.",
      ),
      dexServicePort: int("Port of Dex's Service. Default 5556.", true),
      apiServerAddress: str(
        "The control plane API address konnectors reach (https); the kubeconfig's server when omitted.",
      ),
      apiServerCaPem: str("PEM of that address's CA; the kubeconfig's CA when omitted."),
      labels: LABELS,
      skipAwait: SKIP_AWAIT,
    },
    requiredInputs: ["kubeconfig", "exportedApis", "oidcClientId", "oidcClientSecret"],
    outputs: {
      namespace: str("The backend's namespace."),
      serviceName: str("The backend's Service."),
      externalAddress: str("Where app clusters reach the backend."),
      crdNames: list(str("name"), "The bind CRDs installed (for dependents: export templates, bindings)."),
    },
    requiredOutputs: ["namespace", "serviceName", "externalAddress", "crdNames"],
  },
  {
    token: "klutch:bind:OidcProvider",
    description:
      "The OIDC provider the klutch-bind backend logs users in with: Dex on the control plane (default), or an external Keycloak whose issuer and client are given. The client secret is always a secret.",
    inputs: {
      provider: str("Default dex.", { plain: true, enum: ["dex", "keycloak"] }),
      kubeconfig: {
        ...KUBECONFIG,
        description: "Kubeconfig of the control plane, where Dex runs (dex only). Kept a secret.",
      },
      namespace: str("Namespace Dex runs in; must exist (dex only)."),
      externalAddress: EXTERNAL_ADDRESS,
      issuerUrl: str(
        "Issuer URL (https): required for keycloak; for dex <externalAddress>/dex when omitted.",
        {
          plain: true,
        },
      ),
      clientId: str("Client id. Default klutch-bind (dex); required for keycloak.", { plain: true }),
      clientSecret: str(
        "Client secret: required for keycloak; for dex generated when omitted. Kept a secret.",
        {
          secret: true,
        },
      ),
      clientName: str("Name on the login page. Default Klutch.", { plain: true }),
      image: str("Dex image. Default ghcr.io/dexidp/dex:v2.41.1.", { plain: true }),
      storageSize: str("Size of Dex's SQLite volume, e.g. 1Gi.", { plain: true }),
      connectors: list(ref("klutch:bind:DexConnector", "connector"), "Dex connectors.", true),
      keyRotation: str("Change to make a new generated client secret."),
      labels: LABELS,
      skipAwait: SKIP_AWAIT,
    },
    requiredInputs: [],
    outputs: {
      issuerUrl: str("The issuer the backend trusts."),
      clientId: str("The client id."),
      clientSecret: secret(str("The client secret.")),
      callbackUrl: str("The backend's /callback, the only redirect the client may use."),
      serviceName: str("Dex's Service (dex only)."),
      servicePort: int("Dex's Service port (dex only)."),
    },
    requiredOutputs: ["issuerUrl", "clientId", "clientSecret", "callbackUrl"],
  },
  {
    token: "klutch:bind:AppClusterBinding",
    description:
      "Binds one app cluster to the control plane without a browser login: on the control plane the consumer namespace, the binder identity and its kubeconfig, a ClusterBinding and one export request per API; on the app cluster the konnector (RBAC limited to the bound APIs) and one APIServiceBinding per API.",
    inputs: {
      appCluster: str("The app cluster's name (a DNS-1123 label); names its consumer namespace.", {
        plain: true,
      }),
      controlPlaneKubeconfig: {
        ...KUBECONFIG,
        description: "Admin kubeconfig of the control plane. Kept a secret.",
      },
      appClusterKubeconfig: { ...KUBECONFIG, description: "Kubeconfig of the app cluster. Kept a secret." },
      apis: APIS("The exported APIs this app cluster binds."),
      namespacePrefix: str("The backend's consumer namespace prefix. Default cluster.", { plain: true }),
      prettyName: str("Provider name shown in the binding. Default Klutch.", { plain: true }),
      controlPlaneAddress: str(
        "The control plane API address the konnector uses (https); the kubeconfig's server when omitted.",
      ),
      controlPlaneCaPem: str("PEM of that address's CA; the kubeconfig's CA when omitted."),
      release: RELEASE,
      konnectorImage: str("The konnector's image; the release's when omitted.", { plain: true }),
      awaitExports: bool(
        "Wait until the backend has made each APIServiceExport. Default true, false with skipAwait.",
        true,
      ),
      createKonnectorNamespace: bool(
        "Create the konnector's namespace on the app cluster. Default true.",
        true,
      ),
      bindSubject: str(
        "The OIDC subject (sub) of whoever runs `kubectl bind` for this app cluster: the consumer namespace is annotated as the backend files its own, so /bind finds it instead of making a second one.",
        { plain: true },
      ),
      labels: LABELS,
      skipAwait: SKIP_AWAIT,
    },
    requiredInputs: ["appCluster", "controlPlaneKubeconfig", "appClusterKubeconfig", "apis"],
    outputs: {
      kubeconfig: secret(str("The binder identity's kubeconfig for the control plane.")),
      consumerNamespace: str("The binding's namespace on the control plane."),
      boundApis: list(str("name"), "The bound APIs (<resource>.<group>)."),
    },
    requiredOutputs: ["kubeconfig", "consumerNamespace", "boundApis"],
  },
];
