import { consumerNamespace } from "../../lib/bind/app-cluster-plan";
import type { BridgeSettings, ProxySettings, WireguardSettings } from "../../lib/bridge/settings";
import type { AppClusterConfig, EnvironmentConfig } from "../../config/schema";
import type { ProxyConnectorConfig } from "../proxy/model/config";
import { proxyExposure } from "../proxy/model/exposure";

/**
 * The settings of an environment, keyed by consumer namespace. `wireguard`: the tunnel's
 * per app cluster settings (WireguardTunnel.bridgeSettings), known once it is planned.
 */
export function bridgeSettings(
  config: Pick<EnvironmentConfig, "appClusters" | "bind">,
  wireguard: Readonly<Record<string, WireguardSettings>> = {},
): BridgeSettings {
  const consumers: BridgeSettings["consumers"] = {};
  for (const app of config.appClusters) {
    const connector = app.networkConnector;
    const tunnel = wireguard[app.name];
    consumers[consumerNamespace(config.bind.namespacePrefix, app.name)] = {
      appCluster: app.name,
      implementation: connector.implementation,
      ...(connector.implementation === "proxy" ? { proxy: proxySettingsOf(app, connector) } : {}),
      ...(connector.implementation === "wireguard" && tunnel ? { wireguard: tunnel } : {}),
    };
  }
  return { version: 1, consumers };
}

function proxySettingsOf(app: AppClusterConfig, connector: ProxyConnectorConfig): ProxySettings {
  const exposed = proxyExposure(app, connector);
  return {
    serviceType: connector.serviceType,
    portRange: connector.portRange,
    ...(connector.dedicatedCpus !== undefined ? { dedicatedCpus: connector.dedicatedCpus } : {}),
    // Validation refused an app cluster without one, so this is only absent for configs
    // built around validation (tests); the bridge then refuses a non-ClusterIP proxy.
    ...(exposed.ok ? { exposure: exposed.exposure } : {}),
  };
}
