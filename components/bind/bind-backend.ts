import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { BindConfig, ExportedApiConfig } from "../../lib/config/schema";
import {
  BACKEND_NAME,
  BACKEND_PORT,
  COOKIE_ENCRYPTION_KEY_BYTES,
  COOKIE_SIGNING_KEY_BYTES,
  EXTERNAL_CA_DIR,
  SECRET_ENV,
  backendFlags,
  type BackendUrls,
} from "../../lib/bind/backend-plan";
import { bindCrds } from "../../lib/bind/crds";
import { backendClusterRoleRules } from "../../lib/bind/rbac";
import { releaseImages } from "../../lib/bind/upstream/release";
import { RandomKey } from "../../providers/dynamic/random-key";

export interface KlutchBindBackendArgs {
  /** The control plane's Kubernetes provider. */
  provider: k8s.Provider;
  bind: BindConfig;
  urls: BackendUrls;
  exportedApis: ExportedApiConfig[];
  oidc: {
    clientId: pulumi.Input<string>;
    clientSecret: pulumi.Input<string>;
    /** Dex's Service when Dex is served on the backend's host under urls.dexPathPrefix. */
    dexService?: { name: pulumi.Input<string>; port: number };
  };
  /** The Kubernetes API address and CA handed to konnectors. */
  apiServer: pulumi.Input<{ address: string; caPem: string }>;
  /** Cookie keys from config; generated (and kept in state, encrypted) when not given. */
  cookieSigningKey?: pulumi.Input<string>;
  cookieEncryptionKey?: pulumi.Input<string>;
  /** PEM certificate and key for bind.tls.source = provided. */
  tls?: { certificate: pulumi.Input<string>; key: pulumi.Input<string> };
  /** Create the namespace (bind.namespace); false when the caller already made it. */
  createNamespace?: boolean;
  namespace?: string;
  labels?: Record<string, string>;
  skipAwait?: boolean;
}

/**
 * The klutch-bind backend on the control plane: the bind CRDs, its namespace, an identity
 * with RBAC limited to what the backend does, the Deployment with its flags, the Secrets
 * (OIDC client, cookie keys, the API server CA), the Service and its exposure.
 */
export class KlutchBindBackend extends pulumi.ComponentResource {
  public readonly namespace: pulumi.Output<string>;
  public readonly serviceName: pulumi.Output<string>;
  /** Names of the CRDs installed, for dependents (export templates, bindings). */
  public readonly crds: k8s.apiextensions.v1.CustomResourceDefinition[];
  public readonly externalAddress: pulumi.Output<string>;

  constructor(name: string, args: KlutchBindBackendArgs, opts?: pulumi.ComponentResourceOptions) {
    super("klutch:bind:KlutchBindBackend", name, {}, opts);
    const child = { parent: this, provider: args.provider };
    const labels = { ...args.labels, "app.kubernetes.io/part-of": "klutch" };
    const appLabels = { ...labels, "app.kubernetes.io/name": BACKEND_NAME };
    const selector = { "app.kubernetes.io/name": BACKEND_NAME };
    const skipAwait = args.skipAwait ? { "pulumi.com/skipAwait": "true" } : undefined;
    const nsName = args.namespace ?? "bind";

    this.crds = bindCrds(args.bind.version, labels).map(
      (crd) => new k8s.apiextensions.v1.CustomResourceDefinition(`${name}-${crd.metadata.name}`, crd, child),
    );

    const namespace =
      args.createNamespace === false
        ? pulumi.output(nsName)
        : new k8s.core.v1.Namespace(`${name}-namespace`, { metadata: { name: nsName, labels } }, child)
            .metadata.name;
    this.namespace = namespace;

    const account = new k8s.core.v1.ServiceAccount(
      `${name}-account`,
      { metadata: { name: BACKEND_NAME, namespace, labels: appLabels } },
      child,
    );
    const role = new k8s.rbac.v1.ClusterRole(
      `${name}-role`,
      { metadata: { name: BACKEND_NAME, labels }, rules: backendClusterRoleRules(args.exportedApis) },
      child,
    );
    new k8s.rbac.v1.ClusterRoleBinding(
      `${name}-role-binding`,
      {
        metadata: { name: BACKEND_NAME, labels },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role.metadata.name },
        subjects: [{ kind: "ServiceAccount", name: account.metadata.name, namespace }],
      },
      child,
    );
    // ClusterRole klutch-binder is the backend's: it writes it at every start (deploy/
    // bootstrap.go), so Pulumi leaves it alone rather than fight over it. The backend's
    // ClusterRole above holds every rule of it, which the API server demands of its writer.

    const rotation = args.bind.keyRotation;
    const signingKey =
      args.cookieSigningKey ??
      new RandomKey(
        `${name}-cookie-signing-key`,
        { length: COOKIE_SIGNING_KEY_BYTES, rotation },
        { parent: this },
      ).value;
    const encryptionKey =
      args.cookieEncryptionKey ??
      new RandomKey(
        `${name}-cookie-encryption-key`,
        { length: COOKIE_ENCRYPTION_KEY_BYTES, rotation },
        { parent: this },
      ).value;

    const secret = new k8s.core.v1.Secret(
      `${name}-secret`,
      {
        metadata: { name: BACKEND_NAME, namespace, labels: appLabels },
        stringData: {
          [SECRET_ENV.oidcClientId]: args.oidc.clientId,
          [SECRET_ENV.oidcClientSecret]: pulumi.secret(args.oidc.clientSecret),
          [SECRET_ENV.cookieSigningKey]: pulumi.secret(signingKey),
          [SECRET_ENV.cookieEncryptionKey]: pulumi.secret(encryptionKey),
        },
      },
      child,
    );
    const apiServer = pulumi.output(args.apiServer);
    const caSecret = new k8s.core.v1.Secret(
      `${name}-external-ca`,
      {
        metadata: { name: `${BACKEND_NAME}-external-ca`, namespace, labels: appLabels },
        stringData: { "ca.crt": apiServer.caPem },
      },
      child,
    );

    const env = Object.values(SECRET_ENV).map((key) => ({
      name: key,
      valueFrom: { secretKeyRef: { name: secret.metadata.name, key } },
    }));
    new k8s.apps.v1.Deployment(
      `${name}-deployment`,
      {
        metadata: { name: BACKEND_NAME, namespace, labels: appLabels, annotations: skipAwait },
        spec: {
          replicas: args.bind.replicas,
          // No leader election: never two backends at once, not even during a rollout.
          strategy: { type: "Recreate" },
          selector: { matchLabels: selector },
          template: {
            metadata: {
              labels: { ...appLabels, ...selector },
              // Flags are read at start: roll the pods when a secret they come from changes.
              annotations: {
                "klutch.anynines.com/secret-version": pulumi.interpolate`${secret.metadata.resourceVersion}-${caSecret.metadata.resourceVersion}`,
              },
            },
            spec: {
              serviceAccountName: account.metadata.name,
              securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
              containers: [
                {
                  name: "backend",
                  image: args.bind.image ?? releaseImages(args.bind.version).backend,
                  args: apiServer.address.apply((address) =>
                    backendFlags({ bind: args.bind, urls: args.urls, apiServerAddress: address }),
                  ),
                  env,
                  ports: [{ name: "http", containerPort: BACKEND_PORT }],
                  readinessProbe: { tcpSocket: { port: "http" } },
                  securityContext: {
                    allowPrivilegeEscalation: false,
                    readOnlyRootFilesystem: true,
                    capabilities: { drop: ["ALL"] },
                  },
                  volumeMounts: [{ name: "external-ca", mountPath: EXTERNAL_CA_DIR, readOnly: true }],
                },
              ],
              volumes: [{ name: "external-ca", secret: { secretName: caSecret.metadata.name } }],
            },
          },
        },
      },
      child,
    );

    const service = new k8s.core.v1.Service(
      `${name}-service`,
      {
        metadata: { name: BACKEND_NAME, namespace, labels: appLabels, annotations: skipAwait },
        spec: { selector, ports: [{ name: "http", port: 80, targetPort: "http" }] },
      },
      child,
    );
    this.serviceName = service.metadata.name;
    this.externalAddress = pulumi.output(args.urls.externalAddress);

    this.expose(name, args, namespace, labels, skipAwait);
    this.registerOutputs({
      namespace: this.namespace,
      serviceName: this.serviceName,
      externalAddress: this.externalAddress,
    });
  }

  /** Ingress or Gateway API at the external address, TLS from cert-manager or a provided certificate. */
  private expose(
    name: string,
    args: KlutchBindBackendArgs,
    namespace: pulumi.Output<string>,
    labels: Record<string, string>,
    skipAwait: Record<string, string> | undefined,
  ): void {
    const { bind, urls } = args;
    if (bind.exposure === "none") return;
    const child = { parent: this, provider: args.provider };
    const tlsSecretName = `${BACKEND_NAME}-tls`;
    if (bind.tls.source === "provided") {
      if (!args.tls)
        throw new Error("KlutchBindBackend: bind.tls.source provided needs the certificate and key");
      new k8s.core.v1.Secret(
        `${name}-tls`,
        {
          metadata: { name: tlsSecretName, namespace, labels },
          type: "kubernetes.io/tls",
          stringData: {
            "tls.crt": pulumi.secret(args.tls.certificate),
            "tls.key": pulumi.secret(args.tls.key),
          },
        },
        child,
      );
    }
    // cert-manager's ingress and gateway shims issue the certificate from this annotation.
    const issuerAnnotation: Record<string, string> =
      bind.tls.source === "cert-manager"
        ? {
            [bind.tls.issuerKind === "ClusterIssuer"
              ? "cert-manager.io/cluster-issuer"
              : "cert-manager.io/issuer"]: bind.tls.issuer,
          }
        : {};
    const backends: { path: string; service: pulumi.Input<string>; port: number }[] = [
      { path: "/", service: BACKEND_NAME, port: 80 },
    ];
    if (urls.dexPathPrefix && args.oidc.dexService) {
      backends.unshift({
        path: urls.dexPathPrefix,
        service: args.oidc.dexService.name,
        port: args.oidc.dexService.port,
      });
    }
    const basePath = new URL(urls.externalAddress).pathname.replace(/\/+$/, "");

    if (bind.exposure === "ingress") {
      new k8s.networking.v1.Ingress(
        `${name}-ingress`,
        {
          metadata: {
            name: BACKEND_NAME,
            namespace,
            labels,
            annotations: { ...issuerAnnotation, ...skipAwait },
          },
          spec: {
            ingressClassName: bind.ingressClassName,
            tls: [{ hosts: [urls.host], secretName: tlsSecretName }],
            rules: [
              {
                host: urls.host,
                http: {
                  paths: backends.map((b) => ({
                    path: b.path === "/" ? basePath || "/" : b.path,
                    pathType: "Prefix",
                    backend: { service: { name: b.service, port: { number: b.port } } },
                  })),
                },
              },
            ],
          },
        },
        child,
      );
      return;
    }

    const gateway = new k8s.apiextensions.CustomResource(
      `${name}-gateway`,
      {
        apiVersion: "gateway.networking.k8s.io/v1",
        kind: "Gateway",
        metadata: { name: BACKEND_NAME, namespace, labels, annotations: issuerAnnotation },
        spec: {
          gatewayClassName: bind.gatewayClassName,
          listeners: [
            {
              name: "https",
              hostname: urls.host,
              port: 443,
              protocol: "HTTPS",
              tls: { mode: "Terminate", certificateRefs: [{ kind: "Secret", name: tlsSecretName }] },
              allowedRoutes: { namespaces: { from: "Same" } },
            },
          ],
        },
      },
      child,
    );
    new k8s.apiextensions.CustomResource(
      `${name}-route`,
      {
        apiVersion: "gateway.networking.k8s.io/v1",
        kind: "HTTPRoute",
        metadata: { name: BACKEND_NAME, namespace, labels },
        spec: {
          parentRefs: [{ name: gateway.metadata.name, sectionName: "https" }],
          hostnames: [urls.host],
          rules: backends.map((b) => ({
            matches: [{ path: { type: "PathPrefix", value: b.path === "/" ? basePath || "/" : b.path } }],
            backendRefs: [{ name: b.service, port: b.port }],
          })),
        },
      },
      child,
    );
  }
}
