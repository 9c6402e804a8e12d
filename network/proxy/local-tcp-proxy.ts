import * as pulumi from "@pulumi/pulumi";
import { connectionProblems } from "./model/haproxy-config";
import { localProxyPath } from "./local-proxy-path";
import { portRangeProblem } from "./model/port-planner";
import type { ConsumerEndpoint, PortRange, ProxyConnection } from "./model/types";

export interface LocalTcpProxyArgs {
  connections: ProxyConnection[];
  /** Ports handed out: one per listener plus two of the proxy's own (stats, health). */
  portRange: PortRange;
  /** Address HAProxy listens on and consumers dial. Default 127.0.0.1. */
  bindAddress?: string;
  /** Directory of the proxy's haproxy.cfg and pid file (one directory per proxy). */
  stateDir: string;
}

/**
 * The TCP proxy path realised on this machine: what the bridge's `local` target runs, as a
 * component. Local clusters have no kubelet, so a TcpProxy's pods never start there; this runs
 * the same rendered HAProxy configuration as a process (LocalHaproxy), ports from the same
 * allocation resource, so `psql` reaches the data service through it.
 */
export class LocalTcpProxy extends pulumi.ComponentResource {
  /** Per connection id: the host and port consumers dial. */
  public readonly endpoints: pulumi.Output<Record<string, ConsumerEndpoint>>;
  /** The rendered haproxy.cfg. */
  public readonly config: pulumi.Output<string>;
  /** Listener keys left without a port (the range is full). */
  public readonly unplaced: pulumi.Output<string[]>;

  constructor(name: string, args: LocalTcpProxyArgs, opts?: pulumi.ComponentResourceOptions) {
    super("klutch:network:LocalTcpProxy", name, {}, opts);
    const problems = [
      ...connectionProblems(args.connections),
      ...[portRangeProblem(args.portRange, "portRange")].filter((p): p is string => !!p),
    ];
    if (!args.stateDir)
      problems.push("stateDir is required: the directory of the proxy's haproxy.cfg and pid file");
    if (problems.length > 0)
      throw new Error(`LocalTcpProxy ${name}: invalid arguments:\n  - ${problems.join("\n  - ")}`);

    const path = localProxyPath(
      { ports: `${name}-ports`, haproxy: `${name}-haproxy` },
      {
        connections: args.connections,
        portRange: args.portRange,
        bindAddress: args.bindAddress ?? "127.0.0.1",
        dir: args.stateDir,
      },
      { parent: this },
    );
    this.endpoints = path.endpoints;
    this.config = path.config;
    this.unplaced = path.unplaced.apply((u) => u ?? []);
    this.registerOutputs({ endpoints: this.endpoints, config: this.config, unplaced: this.unplaced });
  }
}
