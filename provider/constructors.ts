import * as fs from "node:fs";
import { ExistingCluster } from "../components/clusters/existing-cluster";
import { LocalCluster } from "../components/clusters/local-cluster";
import { ExportedApi } from "../components/bind/exported-api";
import { LocalTcpProxy } from "../network/proxy/local-tcp-proxy";
import { TcpProxy } from "../network/proxy/tcp-proxy";
import type { ProxyConnection } from "../network/proxy/model/types";
import { type Constructor, clusterProvider, refuse } from "./construct/common";
import { apiConfig, bindConstructors } from "./construct/bind";
import { cloudConstructors } from "./construct/cloud";
import { crossplaneConstructors } from "./construct/crossplane";
import { environmentConstructors } from "./construct/environment";
import { wireguardConstructors } from "./construct/wireguard";

export type { Constructed, Constructor } from "./construct/common";

/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument */
// Inputs arrive checked against provider/catalog.ts (provider.ts); see construct/common.ts.

function readableFile(field: string, file: unknown): string[] {
  if (typeof file !== "string") return [];
  try {
    fs.accessSync(file, fs.constants.R_OK);
    return [];
  } catch {
    return [
      `${field} "${file}" is not a readable file; start the local clusters (\`npm run clusters -- up\`) or name an existing kubeconfig`,
    ];
  }
}

/** Token → how the TypeScript component of that token is made from schema-shaped inputs. */
export const CONSTRUCTORS: Record<string, Constructor> = {
  ...wireguardConstructors,
  ...bindConstructors,
  ...crossplaneConstructors,
  ...cloudConstructors,
  ...environmentConstructors,
  "klutch:cluster:LocalCluster": (name, args, opts) => {
    refuse("LocalCluster", name, readableFile("kubeconfigPath", args.kubeconfigPath));
    const c = new LocalCluster(
      name,
      { clusterName: args.clusterName, kubeconfigPath: args.kubeconfigPath },
      opts,
    );
    return { resource: c, outputs: { clusterName: c.clusterName, kubeconfig: c.kubeconfig } };
  },
  "klutch:cluster:ExistingCluster": (name, args, opts) => {
    refuse("ExistingCluster", name, readableFile("kubeconfigPath", args.kubeconfigPath));
    const c = new ExistingCluster(
      name,
      { clusterName: args.clusterName, kubeconfigPath: args.kubeconfigPath, context: args.context },
      opts,
    );
    return { resource: c, outputs: { clusterName: c.clusterName, kubeconfig: c.kubeconfig } };
  },
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
  "klutch:bind:ExportedApi": (name, args, opts) => {
    const parsed = apiConfig(args, "");
    refuse("ExportedApi", name, parsed.problems);
    const api = new ExportedApi(
      name,
      {
        provider: clusterProvider(name, args.kubeconfig, opts),
        namespace: args.namespace,
        api: parsed.data!,
        // Never empty: an empty labels map is a diff on every run (the API server drops it).
        labels: { "app.kubernetes.io/managed-by": "pulumi", ...args.labels },
      },
      opts,
    );
    return { resource: api, outputs: { templateName: api.templateName } };
  },
};
