import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import {
  localBackupComposition,
  localPostgresqlComposition,
  localRestoreComposition,
  localServiceBindingComposition,
  networkServiceBindingComposition,
} from "../../lib/dataservices/compositions";
import { apiObjects } from "../crossplane/api-objects";
import type { ConfigurationPackage, PackageDelivery } from "../crossplane/configuration-package";
import { postgresqlInstanceXrd, serviceBindingXrd } from "../../lib/dataservices/xrds";
import { backupXrd, restoreXrd } from "../../lib/dataservices/backup-xrds";
import { PROVIDER_KUBERNETES_SERVICE_ACCOUNT } from "../../lib/crossplane/packages";

export interface LocalDataServicesArgs {
  /** Provider of the control plane cluster. */
  provider: k8s.Provider;
  /** The PostgreSQL image the control plane's node holds. */
  postgresImage: string;
  /** Crossplane's namespace, where provider-kubernetes runs. */
  crossplaneNamespace: string;
  /**
   * The connector implementations the control plane offers (NOOP included): a network-aware
   * binding composition each, besides the one that takes the connector's default.
   */
  connectionImplementations: string[];
  labels: Record<string, string>;
  /** Ship the XRDs and compositions as the Configuration package `klutch-local-dataservices`. */
  packaging?: PackageDelivery;
  /** Crossplane with Klutch's function and provider-kubernetes installed; the connector API. */
  dependsOn?: pulumi.Input<pulumi.Resource>[];
}

/** The local data-service API's Configuration package. */
export const LOCAL_DATASERVICES_PACKAGE_NAME = "klutch-local-dataservices";

/**
 * Klutch's data-service API on a control plane where anynines' backends cannot run: upstream's
 * PostgresqlInstance, ServiceBinding, Backup and Restore XRDs, the local backend under a8s's composition names,
 * and the network-aware binding (lib/dataservices/compositions.ts). Type token
 * `klutch:dataservices:LocalDataServices`.
 */
export class LocalDataServices extends pulumi.ComponentResource {
  public readonly compositions: string[];
  /** The Configuration package that ships the API, when packaged. */
  public readonly package?: ConfigurationPackage;

  constructor(name: string, args: LocalDataServicesArgs, opts?: pulumi.ComponentResourceOptions) {
    super("klutch:dataservices:LocalDataServices", name, {}, opts);
    const backend = { image: args.postgresImage };
    const compositions = [
      localPostgresqlComposition(backend, args.labels),
      localServiceBindingComposition(backend, args.labels),
      localBackupComposition(backend, args.labels),
      localRestoreComposition(backend, args.labels),
      networkServiceBindingComposition(backend, args.labels),
      ...args.connectionImplementations.map((i) => networkServiceBindingComposition(backend, args.labels, i)),
    ];
    const nameOf = (o: object) => (o as { metadata: { name: string } }).metadata.name;
    this.package = apiObjects(this, `${name}-package`, {
      provider: args.provider,
      xrds: [
        serviceBindingXrd(args.labels),
        postgresqlInstanceXrd(args.labels),
        backupXrd(args.labels),
        restoreXrd(args.labels),
      ].map((x) => ({
        resourceName: `${name}-${nameOf(x).split(".")[0]}`,
        object: x,
      })),
      compositions: compositions.map((c) => ({
        resourceName: `${name}-${nameOf(c)}`,
        object: c,
      })),
      ...(args.packaging ? { packaging: args.packaging } : {}),
      package: {
        name: LOCAL_DATASERVICES_PACKAGE_NAME,
        description:
          "Klutch's data-service API where anynines' backends cannot run: upstream's PostgresqlInstance, ServiceBinding, Backup and Restore XRDs, the local PostgreSQL backend under a8s's composition names, and the network-aware bindings.",
      },
      labels: args.labels,
      ...(args.dependsOn ? { dependsOn: args.dependsOn } : {}),
    }).package;

    // provider-kubernetes applies what the local backend composes: the Deployment of an instance
    // and the pods that make a binding's role and revoke a gone binding's (Secrets and Services it
    // may handle already: components/crossplane/crossplane.ts).
    const role = new k8s.rbac.v1.ClusterRole(
      `${name}-provider-kubernetes`,
      {
        metadata: { name: "klutch:provider-kubernetes:local-data-services", labels: args.labels },
        rules: [
          {
            apiGroups: ["apps"],
            resources: ["deployments"],
            verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
          },
          {
            apiGroups: [""],
            resources: ["pods"],
            verbs: ["get", "list", "watch", "create", "update", "patch", "delete"],
          },
        ],
      },
      { parent: this, provider: args.provider },
    );
    new k8s.rbac.v1.ClusterRoleBinding(
      `${name}-provider-kubernetes`,
      {
        metadata: { name: "klutch:provider-kubernetes:local-data-services", labels: args.labels },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role.metadata.name },
        subjects: [
          {
            kind: "ServiceAccount",
            name: PROVIDER_KUBERNETES_SERVICE_ACCOUNT,
            namespace: args.crossplaneNamespace,
          },
        ],
      },
      { parent: this, provider: args.provider },
    );
    this.compositions = compositions.map((c) => (c.metadata as { name: string }).name);
    this.registerOutputs({ compositions: this.compositions });
  }
}
