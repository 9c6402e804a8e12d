import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { OidcConfig } from "../../lib/config/schema";
import {
  DEX_CONFIG_DIR,
  DEX_CONFIG_FILE,
  DEX_DATA_DIR,
  DEX_HTTP_PORT,
  DEX_TELEMETRY_PORT,
  renderDexConfig,
} from "../../lib/oidc/dex-config";
import { RandomKey } from "../../providers/dynamic/random-key";

export interface OidcProviderArgs {
  /** The control plane's Kubernetes provider (Dex runs there); unused for Keycloak, which runs elsewhere. */
  provider?: k8s.Provider;
  /** Namespace Dex runs in; it must exist. */
  namespace: pulumi.Input<string>;
  oidc: OidcConfig;
  /** The issuer the backend trusts (for Dex, where Dex is served). */
  issuerUrl: string;
  /** The backend's /callback: the only redirect the client may use. */
  callbackUrl: string;
  /** Name shown on the login page. */
  clientName: string;
  /** The client secret: required for Keycloak; for Dex generated when not given. */
  clientSecret?: pulumi.Input<string>;
  /** Change to make a new generated client secret. */
  keyRotation?: pulumi.Input<string>;
  labels?: Record<string, string>;
  /** Apply workloads without waiting for them to become ready (clusters without a kubelet). */
  skipAwait?: boolean;
}

/**
 * The OIDC provider the klutch-bind backend logs users in with: Dex run on the control
 * plane (the default), or an external Keycloak whose issuer and client come from config.
 * Either way the outputs are what the backend needs, the client secret always a secret.
 */
export class OidcProvider extends pulumi.ComponentResource {
  public readonly issuerUrl: pulumi.Output<string>;
  public readonly clientId: pulumi.Output<string>;
  public readonly clientSecret: pulumi.Output<string>;
  /** Dex's Service (name and port) for the backend's exposure to route to; undefined for Keycloak. */
  public readonly service?: { name: pulumi.Output<string>; port: number };

  constructor(name: string, args: OidcProviderArgs, opts?: pulumi.ComponentResourceOptions) {
    super("klutch:bind:OidcProvider", name, {}, opts);
    const oidc = args.oidc;
    this.issuerUrl = pulumi.output(args.issuerUrl);
    this.clientId = pulumi.output(oidc.clientId);

    if (oidc.provider === "keycloak") {
      if (!args.clientSecret) {
        // Validation reports this with the setting to use; this guards direct use of the component.
        throw new Error("OidcProvider: provider keycloak needs clientSecret (klutch:oidcClientSecret)");
      }
      this.clientSecret = pulumi.secret(args.clientSecret);
    } else {
      if (!args.provider)
        throw new Error("OidcProvider: provider dex needs the control plane's provider (Dex runs there)");
      const generated = args.clientSecret
        ? undefined
        : new RandomKey(
            `${name}-client-secret`,
            { length: 32, encoding: "hex", rotation: args.keyRotation },
            { parent: this },
          );
      this.clientSecret = pulumi.secret(args.clientSecret ?? generated!.value);
      this.service = this.dex(name, args, oidc);
    }
    this.registerOutputs({
      issuerUrl: this.issuerUrl,
      clientId: this.clientId,
      clientSecret: this.clientSecret,
    });
  }

  private dex(
    name: string,
    args: OidcProviderArgs,
    oidc: Extract<OidcConfig, { provider: "dex" }>,
  ): { name: pulumi.Output<string>; port: number } {
    const child = { parent: this, provider: args.provider };
    const appName = "dex";
    const labels = {
      ...args.labels,
      "app.kubernetes.io/name": appName,
      "app.kubernetes.io/part-of": "klutch",
    };
    const selector = { "app.kubernetes.io/name": appName };
    const skipAwait = args.skipAwait ? { "pulumi.com/skipAwait": "true" } : undefined;

    const config = new k8s.core.v1.Secret(
      `${name}-config`,
      {
        metadata: { name: "dex-config", namespace: args.namespace, labels },
        stringData: {
          [DEX_CONFIG_FILE]: this.clientSecret.apply((clientSecret) =>
            renderDexConfig({
              issuerUrl: args.issuerUrl,
              clientId: oidc.clientId,
              clientSecret,
              callbackUrl: args.callbackUrl,
              clientName: args.clientName,
              connectors: oidc.connectors,
            }),
          ),
        },
      },
      child,
    );

    const data = new k8s.core.v1.PersistentVolumeClaim(
      `${name}-data`,
      {
        metadata: { name: "dex-data", namespace: args.namespace, labels, annotations: skipAwait },
        spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: oidc.storageSize } } },
      },
      child,
    );

    // Dex keeps its state in SQLite, so it needs no Kubernetes API access at all.
    const account = new k8s.core.v1.ServiceAccount(
      `${name}-account`,
      { metadata: { name: appName, namespace: args.namespace, labels }, automountServiceAccountToken: false },
      child,
    );

    new k8s.apps.v1.Deployment(
      `${name}-deployment`,
      {
        metadata: { name: appName, namespace: args.namespace, labels, annotations: skipAwait },
        spec: {
          // SQLite on a ReadWriteOnce volume: one writer, replaced not surged.
          replicas: 1,
          strategy: { type: "Recreate" },
          selector: { matchLabels: selector },
          template: {
            metadata: {
              labels: { ...labels, ...selector },
              // Roll the pod when the config changes; Dex reads it only at start.
              annotations: { "klutch.anynines.com/config-version": config.metadata.resourceVersion },
            },
            spec: {
              serviceAccountName: account.metadata.name,
              automountServiceAccountToken: false,
              securityContext: {
                runAsNonRoot: true,
                runAsUser: 1001,
                fsGroup: 1001,
                seccompProfile: { type: "RuntimeDefault" },
              },
              containers: [
                {
                  name: appName,
                  image: oidc.image,
                  args: ["dex", "serve", `${DEX_CONFIG_DIR}/${DEX_CONFIG_FILE}`],
                  ports: [
                    { name: "http", containerPort: DEX_HTTP_PORT },
                    { name: "telemetry", containerPort: DEX_TELEMETRY_PORT },
                  ],
                  readinessProbe: { httpGet: { path: "/healthz/ready", port: "telemetry" } },
                  livenessProbe: { httpGet: { path: "/healthz/live", port: "telemetry" } },
                  securityContext: {
                    allowPrivilegeEscalation: false,
                    readOnlyRootFilesystem: true,
                    capabilities: { drop: ["ALL"] },
                  },
                  volumeMounts: [
                    { name: "config", mountPath: DEX_CONFIG_DIR, readOnly: true },
                    { name: "data", mountPath: DEX_DATA_DIR },
                  ],
                },
              ],
              volumes: [
                { name: "config", secret: { secretName: config.metadata.name } },
                { name: "data", persistentVolumeClaim: { claimName: data.metadata.name } },
              ],
            },
          },
        },
      },
      child,
    );

    const service = new k8s.core.v1.Service(
      `${name}-service`,
      {
        metadata: { name: appName, namespace: args.namespace, labels, annotations: skipAwait },
        spec: { selector, ports: [{ name: "http", port: DEX_HTTP_PORT, targetPort: "http" }] },
      },
      child,
    );
    return { name: service.metadata.name, port: DEX_HTTP_PORT };
  }
}
