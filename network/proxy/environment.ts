import { OpenstackCluster } from "../../clusters/openstack/openstack-cluster";
import type { EnvironmentBuilder } from "../contract/environment-context";
import type { ProxyConnectorConfig } from "./model/config";
import { OpenstackProxyAddress } from "./openstack-address";

/**
 * The proxies themselves are built per connection by the bridge; the environment only
 * reserves what they share: a floating IP when the data-service cluster runs on OpenStack.
 */
export const proxyEnvironment: EnvironmentBuilder<ProxyConnectorConfig> = (ctx, users) => {
  const cp = ctx.controlPlane;
  const out: Record<string, OpenstackProxyAddress> = {};
  if (users.length === 0 || !(cp instanceof OpenstackCluster)) return out;
  out.address = new OpenstackProxyAddress(
    `${ctx.name}-proxy-address`,
    {
      provider: cp.network.provider,
      externalNetworkId: cp.network.externalNetworkId,
      description: `Klutch TCP proxy of ${ctx.config.environment}`,
    },
    { parent: ctx.parent },
  );
  return out;
};
