import { knownNodePortRange, type PortRange } from "../../../lib/config/cluster-limits";
import type { ConfigIssue } from "../../../lib/config/messages";
import { formatPath } from "../../../lib/config/messages";
import type { ControlPlaneConfig } from "../../../lib/config/schema";

/**
 * Asking the data-service cluster's own API server whether it takes a NodePort proxy's ports,
 * where the project cannot know its `--service-node-port-range` (an existing cluster, or a
 * Magnum one adopted by kubeconfig: lib/config/cluster-limits.ts knownNodePortRange), before
 * anything is registered (../node-port-probe.ts asks). Pure: what to ask, and what the answer
 * means.
 *
 * No API serves the range, and a server-side dry-run does not check it: the dry-run allocator
 * only asks whether a port is taken, and a port outside the range never is
 * (k8s.io/kubernetes v1.37.2 pkg/registry/core/service/portallocator/operation.go `Allocate`
 * with dryRun, and allocator.go `Has`, which is false outside the range), so a dry-run of
 * node port 5000 on a 30000-32767 cluster is accepted (test/e2e/node-port-probe.test.ts shows
 * it). Only a real create reaches `PortAllocator.Allocate`, which answers a port outside the
 * range with "provided port is not in the valid range. The range of valid ports is
 * <from>-<to>" (`ErrNotInRange`). So the probe creates a Service with the range's first and
 * last ports as node ports and deletes it at once, on `up` only (a preview changes nothing).
 * "provided port is already allocated" is no refusal: on a second `up` the proxy's own Service
 * holds its ports.
 */
export interface NodePortProbe {
  /** Where the range is set, as the issue names it. */
  at: (string | number)[];
  range: PortRange;
  /** The data-service cluster (the control plane), by its config. */
  cluster: string;
}

/** The probes a config asks for: each NodePort proxy's range where the cluster's range is unknown. */
export function nodePortProbes(config: {
  controlPlane: ControlPlaneConfig;
  appClusters: readonly { networkConnector: unknown }[];
}): NodePortProbe[] {
  if (knownNodePortRange(config.controlPlane)) return [];
  return config.appClusters.flatMap((app, i) => {
    const c = app.networkConnector as {
      implementation?: string;
      serviceType?: string;
      portRange?: PortRange;
    };
    if (c.implementation !== "proxy" || c.serviceType !== "NodePort" || !c.portRange) return [];
    return [
      {
        at: ["appClusters", i, "networkConnector", "portRange"],
        range: c.portRange,
        cluster: config.controlPlane.name,
      },
    ];
  });
}

/** The dry-run Service of a probe: the range's ends as explicit node ports, nothing selected. */
export function probeService(probe: NodePortProbe): Record<string, unknown> {
  const ends = [...new Set([probe.range.from, probe.range.to])];
  return {
    apiVersion: "v1",
    kind: "Service",
    // A name of its own each time: nothing the operator has is ever taken over or replaced.
    metadata: {
      generateName: "klutch-node-port-probe-",
      labels: { "app.kubernetes.io/part-of": "klutch", "app.kubernetes.io/component": "node-port-probe" },
    },
    spec: {
      type: "NodePort",
      ports: ends.map((p, i) => ({ name: `p${i}`, port: 10_000 + i, nodePort: p, protocol: "TCP" })),
    },
  };
}

const NOT_IN_RANGE = /provided port is not in the valid range\. The range of valid ports is (\d+)-(\d+)/;

/** The issue an API server's refusal of a probe means, or undefined when it is none of ours. */
export function probeIssue(probe: NodePortProbe, refusal: string): ConfigIssue | undefined {
  const m = NOT_IN_RANGE.exec(refusal);
  if (!m) return undefined;
  const [from, to] = [Number(m[1]), Number(m[2])];
  return {
    path: formatPath(probe.at),
    message: `${probe.range.from}-${probe.range.to} is outside the node ports of the data-service cluster ${probe.cluster}: its API server takes ${from}-${to} (it refused a Service with these node ports: "provided port is not in the valid range"); choose a range within ${from}-${to}`,
  };
}
