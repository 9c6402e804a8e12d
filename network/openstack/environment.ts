import { formatPath } from "../../lib/config/messages";
import { OpenstackCluster } from "../../clusters/openstack/openstack-cluster";
import type { EnvironmentBuilder } from "../contract/environment-context";
import type { OpenstackConnectorConfig } from "./model/config";
import { OpenstackRoutedPath } from "./routed-path";

/** A routed path from each app cluster's subnet to the data-service subnet. */
export const openstackEnvironment: EnvironmentBuilder<OpenstackConnectorConfig> = (ctx, users) => {
  const out: Record<string, OpenstackRoutedPath> = {};
  for (const { app, connector, index, access } of users) {
    const label = formatPath(["appClusters", index]);
    if (!(access instanceof OpenstackCluster) || !(ctx.controlPlane instanceof OpenstackCluster))
      throw new Error(
        `internal: ${label} routes non-OpenStack clusters (validation should have caught this)`,
      );
    out[app.name] = new OpenstackRoutedPath(
      `${ctx.name}-${app.name}-route`,
      {
        app: access.network,
        dataService: ctx.controlPlane.network,
        dataServiceCidr: ctx.config.controlPlane.dataServiceCidr,
        dataServicePorts: connector.dataServicePorts,
        appLabel: label,
      },
      { parent: ctx.parent },
    );
  }
  return out;
};
