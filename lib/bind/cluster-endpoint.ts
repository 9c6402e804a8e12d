import { parse } from "yaml";

/** Where a cluster's API server is and which CA signs its certificate. */
export interface ClusterEndpoint {
  server: string;
  /** PEM of the CA, or undefined when the kubeconfig trusts the system roots. */
  caPem?: string;
}

interface KubeconfigShape {
  "current-context"?: string;
  contexts?: { name: string; context?: { cluster?: string } }[];
  clusters?: {
    name: string;
    cluster?: { server?: string; "certificate-authority-data"?: string; "certificate-authority"?: string };
  }[];
}

/**
 * Reads the API server address and CA out of a kubeconfig (for the context given, or the
 * current one). The credentials in it are left alone: only public facts come out, which is
 * why the caller may unsecret the result.
 */
export function clusterEndpoint(
  kubeconfig: string,
  context?: string,
  readFile?: (file: string) => string,
): ClusterEndpoint {
  const doc = parse(kubeconfig) as KubeconfigShape | null;
  const contextName = context ?? doc?.["current-context"];
  const ctx = doc?.contexts?.find((c) => c.name === contextName);
  if (!ctx?.context?.cluster)
    throw new Error(`kubeconfig has no context ${contextName ?? "(none selected)"}`);
  const cluster = doc?.clusters?.find((c) => c.name === ctx.context?.cluster)?.cluster;
  if (!cluster?.server) throw new Error(`kubeconfig context ${contextName} names a cluster without a server`);
  const data = cluster["certificate-authority-data"];
  const file = cluster["certificate-authority"];
  const caPem = data
    ? Buffer.from(data, "base64").toString("utf8")
    : file && readFile
      ? readFile(file)
      : undefined;
  return { server: cluster.server, ...(caPem ? { caPem } : {}) };
}
