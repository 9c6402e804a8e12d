import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { EnvironmentConfig } from "../config/schema";
import { clusterEndpoint } from "../../lib/bind/cluster-endpoint";
import { AppClusterBinding } from "../bind/app-cluster-binding";
import { KlutchBindBackend } from "../bind/bind-backend";
import { ExportedApi } from "../bind/exported-api";
import { OidcProvider } from "../bind/oidc-provider";
import type { ClusterAccess } from "../../clusters/types";
import type { EnvironmentPlan } from "../plan/environment-plan";

export interface BindPartArgs {
  config: EnvironmentConfig;
  plan: EnvironmentPlan;
  controlPlane: ClusterAccess;
  appClusters: Readonly<Record<string, ClusterAccess>>;
  /** The planned namespaces, by `<cluster>/<namespace>` (clusters.ts). */
  namespaces: Readonly<Record<string, pulumi.Resource>>;
  secrets?: {
    oidcClientSecret?: pulumi.Output<string>;
    bindCookieSigningKey?: pulumi.Output<string>;
    bindCookieEncryptionKey?: pulumi.Output<string>;
    bindTlsCertificate?: pulumi.Output<string>;
    bindTlsKey?: pulumi.Output<string>;
  };
}

export interface BindPart {
  oidc: OidcProvider;
  backend: KlutchBindBackend;
  exportedApis: ExportedApi[];
  bindings: Record<string, AppClusterBinding>;
}

/**
 * klutch-bind across the environment: the OIDC provider and the backend on the control plane,
 * the exported APIs' templates, and each app cluster's binding (konnector, identity, bound APIs).
 */
export function bindPart(parent: pulumi.Resource, name: string, args: BindPartArgs): BindPart {
  const { config, plan, controlPlane, secrets } = args;
  const { labels, skipAwaitUpstream: skipAwait } = plan;
  const bindNs = args.namespaces[`${config.controlPlane.name}/bind`];
  const crossplaneNs = args.namespaces[`${config.controlPlane.name}/crossplane-system`];
  const urls = plan.bind.urls;
  const oidc = new OidcProvider(
    `${name}-oidc`,
    {
      provider: controlPlane.provider,
      namespace: "bind",
      oidc: config.oidc,
      issuerUrl: urls.issuerUrl,
      callbackUrl: urls.callbackUrl,
      clientName: config.bind.prettyName,
      clientSecret: secrets?.oidcClientSecret,
      keyRotation: config.bind.keyRotation,
      labels,
      skipAwait,
    },
    { parent, dependsOn: bindNs ? [bindNs] : [] },
  );
  // The address and CA konnectors use are public facts of the control plane's
  // kubeconfig; taking them out of the (secret) kubeconfig must not carry its secrecy.
  const cpContext = config.controlPlane.kubeconfig?.context;
  const endpoint = pulumi.unsecret(controlPlane.kubeconfig.apply((k) => clusterEndpoint(k, cpContext)));
  const apiServer = endpoint.apply((e) => ({
    address: config.bind.apiServerAddress ?? e.server,
    caPem: e.caPem ?? "",
  }));
  const backend = new KlutchBindBackend(
    `${name}-bind`,
    {
      provider: controlPlane.provider,
      bind: config.bind,
      urls,
      exportedApis: config.exportedApis,
      oidc: { clientId: oidc.clientId, clientSecret: oidc.clientSecret, dexService: oidc.service },
      apiServer,
      cookieSigningKey: secrets?.bindCookieSigningKey,
      cookieEncryptionKey: secrets?.bindCookieEncryptionKey,
      tls:
        secrets?.bindTlsCertificate && secrets.bindTlsKey
          ? { certificate: secrets.bindTlsCertificate, key: secrets.bindTlsKey }
          : undefined,
      createNamespace: false,
      namespace: "bind",
      labels,
      skipAwait,
    },
    { parent, dependsOn: bindNs ? [bindNs] : [] },
  );
  // Klutch's backend looks for templates in crossplane-system (seed 004).
  const exportedApis = config.exportedApis.map(
    (api) =>
      new ExportedApi(
        `${name}-export-${api.resource}`,
        { provider: controlPlane.provider, namespace: "crossplane-system", api, labels },
        { parent, dependsOn: [...backend.crds, ...(crossplaneNs ? [crossplaneNs] : [])] },
      ),
  );
  const bindings = Object.fromEntries(
    plan.bind.appClusters.map((app) => {
      const appNs = args.namespaces[`${app.name}/klutch-bind`];
      const appCluster = args.appClusters[app.name];
      if (!appCluster) throw new Error(`internal: no app cluster ${app.name}`);
      const binding = new AppClusterBinding(
        `${name}-${app.name}-binding`,
        {
          appCluster: app.name,
          controlPlaneProvider: controlPlane.provider,
          controlPlaneKubeconfig: controlPlane.kubeconfig,
          appClusterProvider: appCluster.provider,
          namespacePrefix: config.bind.namespacePrefix,
          prettyName: config.bind.prettyName,
          apis: app.apis,
          controlPlane: apiServer,
          release: config.bind.version,
          konnectorImage: app.konnectorImage,
          awaitExports: app.awaitExports,
          createKonnectorNamespace: false,
          ...(app.bindSubject
            ? { identity: { subject: app.bindSubject, konnectorNamespaceUid: uidOf(appNs, app.name) } }
            : {}),
          controlPlaneDependsOn: backend.crds,
          labels,
          skipAwait,
        },
        { parent, dependsOn: appNs ? [appNs] : [] },
      );
      return [app.name, binding] as const;
    }),
  );
  return { oidc, backend, exportedApis, bindings };
}

/** The UID of an app cluster's planned klutch-bind namespace, which its cluster ID hashes. */
function uidOf(ns: pulumi.Resource | undefined, app: string): pulumi.Output<string> {
  if (!(ns instanceof k8s.core.v1.Namespace))
    throw new Error(`internal: no klutch-bind namespace for ${app}`);
  return ns.metadata.uid;
}
