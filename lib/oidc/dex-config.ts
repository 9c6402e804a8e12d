import { stringify } from "yaml";

/**
 * Dex's configuration for the klutch-bind login: one static client (the backend) whose
 * only redirect is the backend's /callback, SQLite storage on a volume (so signing keys
 * and refresh tokens survive restarts without giving Dex any Kubernetes API rights), and
 * the configured upstream connectors. Pure: the component puts the result in a Secret.
 */

export const DEX_HTTP_PORT = 5556;
export const DEX_TELEMETRY_PORT = 5558;
export const DEX_DATA_DIR = "/var/dex";
export const DEX_CONFIG_DIR = "/etc/dex";
export const DEX_CONFIG_FILE = "config.yaml";

export interface DexConnector {
  type: string;
  id: string;
  name: string;
  config?: Record<string, unknown>;
}

export interface DexConfigInputs {
  issuerUrl: string;
  clientId: string;
  clientSecret: string;
  callbackUrl: string;
  /** Shown on Dex's login page. */
  clientName: string;
  connectors: DexConnector[];
}

export function dexConfig(inputs: DexConfigInputs): Record<string, unknown> {
  return {
    issuer: inputs.issuerUrl,
    storage: { type: "sqlite3", config: { file: `${DEX_DATA_DIR}/dex.db` } },
    web: { http: `0.0.0.0:${DEX_HTTP_PORT}` },
    telemetry: { http: `0.0.0.0:${DEX_TELEMETRY_PORT}` },
    oauth2: { responseTypes: ["code"], skipApprovalScreen: true },
    staticClients: [
      {
        id: inputs.clientId,
        name: inputs.clientName,
        secret: inputs.clientSecret,
        redirectURIs: [inputs.callbackUrl],
      },
    ],
    // Dex needs at least one way to log in; the password database is empty until an
    // operator adds users, so it grants nothing by itself.
    enablePasswordDB: inputs.connectors.length === 0,
    ...(inputs.connectors.length > 0 ? { connectors: inputs.connectors } : {}),
  };
}

export function renderDexConfig(inputs: DexConfigInputs): string {
  return stringify(dexConfig(inputs), { lineWidth: 0 });
}
