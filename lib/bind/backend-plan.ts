import type { BindConfig, ExportedApiConfig, OidcConfig } from "../config/schema";

/**
 * What the klutch-bind backend is told and allowed, derived from the environment config.
 * Pure, so the flags and RBAC rules are tested without Pulumi.
 */

export const BIND_NAMESPACE = "bind";
export const BACKEND_NAME = "klutch-bind-backend";
export const BACKEND_PORT = 8080;
/** Where the Deployment mounts the CA of the API address handed to konnectors. */
export const EXTERNAL_CA_DIR = "/etc/klutch-bind/external-ca";
export const EXTERNAL_CA_FILE = `${EXTERNAL_CA_DIR}/ca.crt`;

/** Cookie key sizes the backend accepts (bytes before base64). */
export const COOKIE_SIGNING_KEY_BYTES = 32;
export const COOKIE_ENCRYPTION_KEY_BYTES = 32;

/**
 * Environment variables the Deployment fills from its Secret. The flags refer to them as
 * $(NAME), which the kubelet expands, so no secret value is written into the Deployment.
 */
export const SECRET_ENV = {
  oidcClientId: "OIDC_CLIENT_ID",
  oidcClientSecret: "OIDC_CLIENT_SECRET",
  cookieSigningKey: "COOKIE_SIGNING_KEY",
  cookieEncryptionKey: "COOKIE_ENCRYPTION_KEY",
} as const;

export interface BackendUrls {
  /** The backend's public https address, without a trailing slash. */
  externalAddress: string;
  /** Host name of that address, for the Ingress/HTTPRoute. */
  host: string;
  /** Where the OIDC provider sends users back: the backend's /callback route. */
  callbackUrl: string;
  /** The OIDC issuer the backend trusts. */
  issuerUrl: string;
  /** Path prefix Dex is served under on the backend's host (Dex only, issuer derived). */
  dexPathPrefix?: string;
}

export function backendUrls(bind: Pick<BindConfig, "externalAddress">, oidc: OidcConfig): BackendUrls {
  const url = new URL(bind.externalAddress);
  const externalAddress = `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
  const derivedDex = oidc.provider === "dex" && !oidc.issuerUrl;
  return {
    externalAddress,
    host: url.hostname,
    callbackUrl: `${externalAddress}/callback`,
    issuerUrl: oidc.issuerUrl ?? `${externalAddress}/dex`,
    ...(derivedDex ? { dexPathPrefix: `${url.pathname.replace(/\/+$/, "")}/dex` } : {}),
  };
}

export interface BackendFlagInputs {
  bind: Pick<BindConfig, "namespacePrefix" | "prettyName" | "consumerScope">;
  urls: BackendUrls;
  /** The Kubernetes API address konnectors use (https). */
  apiServerAddress: string;
}

/**
 * The backend's command-line flags. Every flag the backend requires when OIDC is on is
 * here (client id/secret, issuer, callback, cookie signing key); secrets are $(ENV) refs.
 */
export function backendFlags(inputs: BackendFlagInputs): string[] {
  const { bind, urls } = inputs;
  return [
    `--namespace-prefix=${bind.namespacePrefix}`,
    `--pretty-name=${bind.prettyName}`,
    `--consumer-scope=${bind.consumerScope}`,
    `--listen-address=0.0.0.0:${BACKEND_PORT}`,
    `--oidc-issuer-url=${urls.issuerUrl}`,
    `--oidc-callback-url=${urls.callbackUrl}`,
    `--oidc-issuer-client-id=$(${SECRET_ENV.oidcClientId})`,
    `--oidc-issuer-client-secret=$(${SECRET_ENV.oidcClientSecret})`,
    `--cookie-signing-key=$(${SECRET_ENV.cookieSigningKey})`,
    `--cookie-encryption-key=$(${SECRET_ENV.cookieEncryptionKey})`,
    `--external-address=${inputs.apiServerAddress}`,
    `--external-ca-file=${EXTERNAL_CA_FILE}`,
  ];
}

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** The verbs the backend grants consumers on exported resources and claims (it must hold them itself). */
export const EXPORT_VERBS = ["get", "list", "watch", "create", "update", "patch", "delete"];
const READ = ["get", "list", "watch"];

/** The ClusterRole consumers' identities are bound to by the backend (Klutch calls it klutch-binder). */
export const BINDER_CLUSTER_ROLE = "klutch-binder";

/** What a consumer identity may do on the bind API itself, as Klutch's klutch-binder role grants. */
export function binderRules(): PolicyRule[] {
  return [
    { apiGroups: ["klutch.anynines.com"], resources: ["apiserviceexportrequests"], verbs: EXPORT_VERBS },
    { apiGroups: [""], resources: ["namespaces"], verbs: ["get"] },
    { apiGroups: [""], resources: ["secrets"], verbs: READ },
    { apiGroups: ["klutch.anynines.com"], resources: ["clusterbindings", "apiserviceexports"], verbs: READ },
    {
      apiGroups: ["klutch.anynines.com"],
      resources: ["clusterbindings/status", "apiserviceexports/status"],
      verbs: ["get", "update", "patch"],
    },
    { apiGroups: ["klutch.anynines.com"], resources: ["apiservicenamespaces"], verbs: EXPORT_VERBS },
  ];
}

/**
 * The backend's own ClusterRole, derived from the API calls its controllers make: it
 * creates a namespace, service account, kubeconfig secret and RBAC per consumer, manages
 * the bind objects, reads CRDs and export templates. It has no wildcard and no `escalate`:
 * instead of escalating it holds exactly the permissions it hands out, i.e. the export
 * verbs on each exported resource and claimed resource, and `bind` on klutch-binder only.
 */
export function backendRules(exportedApis: ExportedApiConfig[]): PolicyRule[] {
  const rules: PolicyRule[] = [
    { apiGroups: [""], resources: ["namespaces"], verbs: [...READ, "create", "delete"] },
    { apiGroups: [""], resources: ["serviceaccounts"], verbs: [...READ, "create"] },
    { apiGroups: [""], resources: ["secrets"], verbs: [...READ, "create", "update"] },
    { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
    {
      apiGroups: ["rbac.authorization.k8s.io"],
      resources: ["roles", "rolebindings", "clusterroles", "clusterrolebindings"],
      verbs: [...READ, "create", "update", "delete"],
    },
    {
      apiGroups: ["rbac.authorization.k8s.io"],
      resources: ["clusterroles"],
      verbs: ["bind"],
      resourceNames: [BINDER_CLUSTER_ROLE],
    },
    { apiGroups: ["apiextensions.k8s.io"], resources: ["customresourcedefinitions"], verbs: READ },
    { apiGroups: ["apps"], resources: ["deployments"], verbs: READ },
    {
      apiGroups: ["klutch.anynines.com"],
      resources: [
        "apiserviceexportrequests",
        "apiserviceexports",
        "apiservicenamespaces",
        "clusterbindings",
        "appclusterbindings",
        "apiservicebindings",
      ],
      verbs: EXPORT_VERBS,
    },
    {
      apiGroups: ["klutch.anynines.com"],
      resources: [
        "apiserviceexportrequests/status",
        "apiserviceexports/status",
        "apiservicenamespaces/status",
        "clusterbindings/status",
        "appclusterbindings/status",
      ],
      verbs: ["get", "update", "patch"],
    },
    {
      apiGroups: ["example-backend.klutch.anynines.com"],
      resources: ["apiserviceexporttemplates"],
      verbs: READ,
    },
  ];
  return [...rules, ...grantedRules(exportedApis)];
}

/** Export verbs on every exported and claimed resource, one rule per API group, sorted. */
export function grantedRules(exportedApis: ExportedApiConfig[]): PolicyRule[] {
  const byGroup = new Map<string, Set<string>>();
  const add = (group: string, resource: string) => {
    const set = byGroup.get(group) ?? new Set<string>();
    set.add(resource);
    byGroup.set(group, set);
  };
  for (const api of exportedApis) {
    add(api.group, api.resource);
    for (const claim of api.permissionClaims) add(claim.group, claim.resource);
  }
  return [...byGroup.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([group, resources]) => ({
      apiGroups: [group],
      resources: [...resources].sort(),
      verbs: EXPORT_VERBS,
    }));
}

/** A rule that grants everything somewhere, which no role of ours may contain. */
export function hasWildcard(rule: PolicyRule): boolean {
  return [...rule.apiGroups, ...rule.resources, ...rule.verbs].includes("*");
}

/** Name of the APIServiceExportTemplate of an exported API (the seed names it after the resource). */
export function exportTemplateName(api: Pick<ExportedApiConfig, "resource" | "group">): string {
  return api.resource;
}
