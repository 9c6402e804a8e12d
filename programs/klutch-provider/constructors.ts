import * as fs from "node:fs";
import { ExistingCluster } from "../../clusters/existing-cluster";
import { LocalCluster } from "../../clusters/local-cluster";
import { ExportedApi } from "../../components/bind/exported-api";
import { type Constructor, clusterProvider, refuse } from "../../providers/kit/construct";
import { apiConfig, bindConstructors } from "./construct/bind";
import { crossplaneConstructors } from "./construct/crossplane";
import { environmentConstructors } from "./construct/environment";
import { IMPLEMENTATIONS } from "../../network/registry";

export type { Constructed, Constructor } from "../../providers/kit/construct";

/* eslint-disable @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument */
// Inputs arrive checked against programs/klutch-provider/catalog.ts (provider.ts); see providers/kit/construct.ts.

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
  // What each registered implementation serves (its spec's `pulumi.provider`).
  ...(Object.assign({}, ...IMPLEMENTATIONS.map((i) => i.pulumi.provider?.().constructors ?? {})) as Record<
    string,
    Constructor
  >),
  ...bindConstructors,
  ...crossplaneConstructors,
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
