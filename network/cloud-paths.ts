import * as pulumi from "@pulumi/pulumi";
import { formatPath } from "../lib/config/messages";
import { EnvironmentConfig } from "../lib/config/schema";
import { AwsCluster } from "../components/clusters/aws/aws-cluster";
import { OpenstackCluster } from "../components/clusters/openstack/openstack-cluster";
import { ClusterAccess } from "../components/clusters/types";
import { VpcPeering } from "./aws-vpc-peering/vpc-peering";
import { OpenstackProxyAddress } from "./proxy/openstack-address";
import { OpenstackRoutedPath } from "./openstack/routed-path";

/** Cloud resources of the network paths, by app cluster. */
export interface CloudPaths {
  vpcPeerings: Record<string, VpcPeering>;
  openstackPaths: Record<string, OpenstackRoutedPath>;
  /** The proxy's floating IP when the control plane runs on OpenStack and an app cluster uses the proxy. */
  proxyAddress?: OpenstackProxyAddress;
}

/**
 * The cloud side of each app cluster's network path, known from config alone: AWS VPC
 * peering and OpenStack routing to the control plane's (data-service) network, and a
 * floating IP for the proxy on OpenStack. Paths that live in Kubernetes (proxy, WireGuard)
 * are built per connection elsewhere.
 */
export function cloudNetworkPaths(
  name: string,
  config: EnvironmentConfig,
  controlPlane: ClusterAccess,
  appClusters: Record<string, ClusterAccess>,
  parent: pulumi.Resource,
): CloudPaths {
  const paths: CloudPaths = { vpcPeerings: {}, openstackPaths: {} };
  const cp = config.controlPlane;
  config.appClusters.forEach((app, i) => {
    const access = appClusters[app.name];
    const connector = app.networkConnector;
    const label = formatPath(["appClusters", i]);
    if (connector.implementation === "awsVpcPeering") {
      if (!(access instanceof AwsCluster) || !(controlPlane instanceof AwsCluster))
        throw new Error(`internal: ${label} peers non-AWS clusters (validation should have caught this)`);
      const req = access.network;
      const acc = controlPlane.network;
      paths.vpcPeerings[app.name] = new VpcPeering(
        `${name}-${app.name}-peering`,
        {
          requester: { label, ...req, cidrs: [req.cidr] },
          accepter: { label: formatPath(["controlPlane"]), ...acc, cidrs: [acc.cidr] },
          accepterRoleArn: connector.accepter?.roleArn,
          dataServicePorts: connector.dataServicePorts,
          tags: { "klutch.anynines.com/environment": config.environment },
        },
        { parent },
      );
    } else if (connector.implementation === "openstack") {
      if (!(access instanceof OpenstackCluster) || !(controlPlane instanceof OpenstackCluster))
        throw new Error(
          `internal: ${label} routes non-OpenStack clusters (validation should have caught this)`,
        );
      paths.openstackPaths[app.name] = new OpenstackRoutedPath(
        `${name}-${app.name}-route`,
        {
          app: access.network,
          dataService: controlPlane.network,
          dataServiceCidr: cp.dataServiceCidr,
          dataServicePorts: connector.dataServicePorts,
          appLabel: label,
        },
        { parent },
      );
    } else if (connector.implementation === "proxy" && controlPlane instanceof OpenstackCluster) {
      paths.proxyAddress ??= new OpenstackProxyAddress(
        `${name}-proxy-address`,
        {
          provider: controlPlane.network.provider,
          externalNetworkId: controlPlane.network.externalNetworkId,
          description: `Klutch TCP proxy of ${config.environment}`,
        },
        { parent },
      );
    }
  });
  return paths;
}
