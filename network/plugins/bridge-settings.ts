import { consumerNamespace } from "../../lib/bind/app-cluster-plan";
import type { BridgeSettings } from "../../lib/bridge/settings";
// The implementation-agnostic shape: the registered implementations' config (components/config/)
// sits in the band above and is assignable to it.
import type { EnvironmentConfig } from "../../lib/config/schema";
import { implementationSpec } from "../registry";

/**
 * The settings of an environment, keyed by consumer namespace: each app cluster's app cluster
 * name, implementation and, under the implementation's name, what its spec tells the bridge
 * (`bridgeSettings.of`), or what its environment side learnt once built (`planned`, by
 * implementation then app cluster, e.g. the WireGuard tunnel's addresses).
 */
export function bridgeSettings(
  config: Pick<EnvironmentConfig, "appClusters" | "bind">,
  planned: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {},
): BridgeSettings {
  const consumers: BridgeSettings["consumers"] = {};
  for (const app of config.appClusters) {
    const connector = app.networkConnector;
    const name = connector.implementation;
    const spec = implementationSpec(name);
    const own: unknown = planned[name]?.[app.name] ?? spec?.bridgeSettings?.of?.(app, connector);
    consumers[consumerNamespace(config.bind.namespacePrefix, app.name)] = {
      appCluster: app.name,
      implementation: name,
      ...(own !== undefined ? { [name]: own } : {}),
    };
  }
  return { version: 1, consumers };
}
