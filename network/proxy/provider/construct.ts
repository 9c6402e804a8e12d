import { type Constructor, clusterProvider } from "../../../providers/kit/construct";
import { LocalTcpProxy } from "../local-tcp-proxy";
import type { ProxyConnection } from "../model/types";
import { TcpProxy } from "../tcp-proxy";

/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument */
// Inputs arrive checked against programs/klutch-provider/catalog.ts (provider.ts); see providers/kit/construct.ts.

export const proxyConstructors: Record<string, Constructor> = {
  "klutch:network:TcpProxy": (name, args, opts) => {
    const proxy = new TcpProxy(
      name,
      {
        provider: clusterProvider(name, args.kubeconfig, opts),
        namespace: args.namespace,
        connections: args.connections,
        portRange: args.portRange,
        serviceType: args.serviceType,
        exposure: args.exposure,
        image: args.image,
        replicas: args.replicas,
        skipAwait: args.skipAwait,
        externalHost: args.externalHost,
        nodeHost: args.nodeHost,
        clusterDomain: args.clusterDomain,
        overflow: args.overflow,
        dedicatedCpus: args.dedicatedCpus,
      },
      opts,
    );
    return {
      resource: proxy,
      outputs: {
        endpoints: proxy.endpoints,
        assignments: proxy.assignments,
        config: proxy.config,
        unplaced: proxy.unplaced,
        serviceName: proxy.serviceName,
      },
    };
  },
  "klutch:network:LocalTcpProxy": (name, args, opts) => {
    const proxy = new LocalTcpProxy(
      name,
      {
        connections: args.connections as ProxyConnection[],
        portRange: args.portRange,
        bindAddress: args.bindAddress,
        stateDir: args.stateDir,
      },
      opts,
    );
    return {
      resource: proxy,
      outputs: { endpoints: proxy.endpoints, config: proxy.config, unplaced: proxy.unplaced },
    };
  },
};
