import * as pulumi from "@pulumi/pulumi";
import { consumerEndpoints, renderHaproxyConfig } from "./model/haproxy-config";
import { LocalHaproxy } from "./local-haproxy";
import { PortAllocation } from "./port-allocation";
import type { ConsumerEndpoint, PortRange, ProxyConnection } from "./model/types";
import { listenerKey, listenerKeys } from "./model/types";

const STATS = "~stats";
const HEALTH = "~health";

export interface LocalProxyPathArgs {
  connections: pulumi.Input<ProxyConnection[]>;
  /** Ports handed out: one per listener, plus the proxy's own stats and health ports. */
  portRange: pulumi.Input<PortRange>;
  /** Address HAProxy listens on and consumers dial (loopback or an address of this machine). */
  bindAddress: string;
  /** Ports of `portRange` never handed out (other groups' slots between this group's blocks). */
  reserved?: number[];
  /** Directory of this proxy's haproxy.cfg and pid file. */
  dir: pulumi.Input<string>;
  /** Ports listeners had before the allocation existed (see PortAllocationInputs.seed). */
  seed?: Record<string, number>;
}

export interface LocalProxyPath {
  endpoints: pulumi.Output<Record<string, ConsumerEndpoint>>;
  /** Listener keys left without a port (the range is full). */
  unplaced: pulumi.Output<string[] | undefined>;
  config: pulumi.Output<string>;
}

/**
 * The proxy path of a machine without kubelets: an HAProxy process on this machine (LocalHaproxy)
 * serving the rendered config, with its own stats and health listeners taking ports from the
 * same allocation, so several proxies on one machine never collide. Used by the bridge's local
 * target (proxyProgram) and by the LocalTcpProxy component; `names` keeps each caller's resource
 * names (the bridge's stacks already hold "ports" and "haproxy").
 */
export function localProxyPath(
  names: { ports: string; haproxy: string },
  args: LocalProxyPathArgs,
  opts?: pulumi.CustomResourceOptions,
): LocalProxyPath {
  const connections = pulumi.output(args.connections);
  const ports = new PortAllocation(
    names.ports,
    {
      range: args.portRange,
      ids: connections.apply((list) => [...listenerKeys(list), STATS, HEALTH]),
      overflow: "leave-out",
      required: [STATS, HEALTH],
      ...(args.reserved && args.reserved.length > 0 ? { reserved: args.reserved } : {}),
      ...(args.seed ? { seed: args.seed } : {}),
    },
    opts,
  );
  const placed = pulumi
    .all([connections, ports.assignments])
    .apply(([list, assignments]) => list.filter((c) => assignments[listenerKey(c)] !== undefined));
  const endpoints = pulumi
    .all([placed, ports.assignments])
    .apply(([list, assignments]) => consumerEndpoints(list, assignments, args.bindAddress));
  const config = pulumi.all([placed, ports.assignments]).apply(([list, assignments]) =>
    renderHaproxyConfig(list, assignments, {
      bindAddress: args.bindAddress,
      statsPort: assignments[STATS],
      healthPort: assignments[HEALTH],
      nbthread: 1,
    }),
  );
  new LocalHaproxy(names.haproxy, { dir: args.dir, config }, opts);
  return { endpoints, unplaced: ports.unplaced, config };
}
