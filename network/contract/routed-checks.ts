import { formatPath } from "../../lib/config/messages";
import { cidrsOverlap } from "../../lib/net/cidr";
import type { AppClusterConfig, ControlPlaneConfig } from "../../lib/config/schema";
import type { AddIssue, ConfigPath, Located } from "./implementation";

/**
 * Rules every routed path (VPC peering, OpenStack routers) shares: both ends on the
 * implementation's cloud, and disjoint networks, since a route cannot tell them apart.
 */
export function checkRoutedPair(
  app: Located<AppClusterConfig>,
  controlPlane: Located<ControlPlaneConfig>,
  implementation: string,
  infrastructure: "aws" | "openstack",
  add: AddIssue,
): boolean {
  const at = [...app.at, "networkConnector"];
  if (app.value.infrastructure !== infrastructure || controlPlane.value.infrastructure !== infrastructure) {
    add(
      [...at, "implementation"],
      `${implementation} needs an ${infrastructure} app cluster and an ${infrastructure} control plane (got ${app.value.infrastructure} and ${controlPlane.value.infrastructure}); use proxy or wireguard instead`,
    );
    return false;
  }
  checkRoutedOverlap(app, controlPlane, at, add);
  return true;
}

function checkRoutedOverlap(
  app: Located<AppClusterConfig>,
  controlPlane: Located<ControlPlaneConfig>,
  at: ConfigPath,
  add: AddIssue,
): void {
  const own = app.value.network?.nodeCidr;
  if (!own) return;
  const dataCidrs = [controlPlane.value.dataServiceCidr, controlPlane.value.network?.nodeCidr].filter(
    (c): c is string => !!c,
  );
  for (const data of dataCidrs) {
    if (cidrsOverlap(own, data)) {
      add(
        [...app.at, "network", "nodeCidr"],
        `${own} overlaps the data-service network ${data}; routed paths (${formatPath(at)}) need disjoint CIDRs`,
      );
    }
  }
}
