import type { AppClusterConfig } from "../../../lib/config/schema";
import { type Exposure, type ExposureResult, exposureOf, sharedExposure } from "../../contract/exposure";
import type { WireguardConnectorConfig } from "./config";

type ExposureFields = Pick<WireguardConnectorConfig, "allowedSources" | "internal" | "publicEndpoint">;

/**
 * Who may reach the gateway's UDP port from one app cluster: its clients' addresses, on the
 * LoadBalancer Service the gateway pod sits behind (network/contract/exposure.ts). WireGuard answers
 * no packet without a known key, but an unlisted source should not even reach it.
 */
export function gatewayExposureOf(
  app: Pick<AppClusterConfig, "infrastructure" | "network">,
  connector: ExposureFields,
): ExposureResult {
  return exposureOf(app, { serviceType: "LoadBalancer", ...connector }, "WireGuard gateway");
}

/**
 * The one gateway's exposure: every app cluster's sources. Validation (checks.ts) has refused
 * an app cluster whose sources are unknown, so none is left out here.
 */
export function gatewayExposure(
  users: readonly {
    app: Pick<AppClusterConfig, "name" | "infrastructure" | "network">;
    connector: ExposureFields;
  }[],
): Exposure {
  return sharedExposure(
    users.map(({ app, connector }) => {
      const r = gatewayExposureOf(app, connector);
      if (!r.ok) throw new Error(`internal: app cluster ${app.name}: ${r.problem} (validation checks it)`);
      return r.exposure;
    }),
  );
}
