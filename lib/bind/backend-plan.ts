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

/**
 * Cookie key sizes (bytes before base64). The backend accepts a 32- or 64-byte signing key and
 * a 16/24/32-byte encryption key, but its check of the encryption key tests the *signing* key
 * against 16/24/32 (contrib/example-backend/options/cookie.go at v1.4.0 and v1.5.0), so with an
 * encryption key set (always, here) only a 32-byte signing key starts.
 */
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
  /**
   * The backend's /authorize route as `kubectl bind` must open it. Without
   * --oidc-authorize-url the backend advertises http://<Host>/authorize, plain http even
   * behind TLS (contrib/example-backend/http/handler.go), so it is always passed.
   */
  authorizeUrl: string;
  /** Path prefix Dex is served under on the backend's host (Dex only, issuer derived). */
  dexPathPrefix?: string;
}

export function backendUrls(
  bind: Pick<BindConfig, "externalAddress" | "authorizeUrl">,
  oidc: OidcConfig,
): BackendUrls {
  const url = new URL(bind.externalAddress);
  const externalAddress = `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
  const derivedDex = oidc.provider === "dex" && !oidc.issuerUrl;
  return {
    externalAddress,
    host: url.hostname,
    callbackUrl: `${externalAddress}/callback`,
    authorizeUrl: bind.authorizeUrl ?? `${externalAddress}/authorize`,
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
    `--oidc-authorize-url=${urls.authorizeUrl}`,
    `--oidc-issuer-client-id=$(${SECRET_ENV.oidcClientId})`,
    `--oidc-issuer-client-secret=$(${SECRET_ENV.oidcClientSecret})`,
    `--cookie-signing-key=$(${SECRET_ENV.cookieSigningKey})`,
    `--cookie-encryption-key=$(${SECRET_ENV.cookieEncryptionKey})`,
    `--external-address=${inputs.apiServerAddress}`,
    `--external-ca-file=${EXTERNAL_CA_FILE}`,
  ];
}

/** Name of the APIServiceExportTemplate of an exported API (the seed names it after the resource). */
export function exportTemplateName(api: Pick<ExportedApiConfig, "resource" | "group">): string {
  return api.resource;
}
