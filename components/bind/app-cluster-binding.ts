import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { ExportedApiConfig } from "../../lib/config/schema";
import {
  CLUSTER_BINDING_NAME,
  CONSUMER_ROLE,
  KONNECTOR,
  KONNECTOR_NAMESPACE,
  KUBECONFIG_KEY,
  KUBECONFIG_SECRET,
  apiObjectName,
  consumerNamespace,
  consumerRules,
  exportRequestSpec,
  konnectorNamespaceRules,
  konnectorRules,
  renderConsumerKubeconfig,
  serviceBindingSpec,
} from "../../lib/bind/app-cluster-plan";
import { apiServiceBindingCrd } from "../../lib/bind/crds";

export interface AppClusterBindingArgs {
  /** The app cluster's name in the environment config. */
  appCluster: string;
  controlPlaneProvider: k8s.Provider;
  appClusterProvider: k8s.Provider;
  /** The backend's namespace prefix (bind.namespacePrefix). */
  namespacePrefix: string;
  prettyName: string;
  /** The exported APIs this app cluster binds. */
  apis: ExportedApiConfig[];
  /** The control plane API address and CA the konnector uses. */
  controlPlane: pulumi.Input<{ address: string; caPem: string }>;
  konnectorImage: string;
  /** Create the konnector's namespace on the app cluster; false when the caller made it. */
  createKonnectorNamespace?: boolean;
  labels?: Record<string, string>;
  /** Objects that must exist first on the control plane (the bind CRDs). */
  controlPlaneDependsOn?: pulumi.Input<pulumi.Resource>[];
  skipAwait?: boolean;
}

/**
 * Binds one app cluster to the control plane without a browser login: the consumer's
 * namespace, identity, token and RBAC on the control plane with the Klutch objects that
 * record the binding, and on the app cluster the konnector with least-privilege RBAC, its
 * kubeconfig Secret and one APIServiceBinding per bound API.
 */
export class AppClusterBinding extends pulumi.ComponentResource {
  /** The consumer identity's kubeconfig for the control plane; a secret. */
  public readonly kubeconfig: pulumi.Output<string>;
  /** The consumer's namespace on the control plane. */
  public readonly consumerNamespace: pulumi.Output<string>;
  public readonly boundApis: string[];

  constructor(name: string, args: AppClusterBindingArgs, opts?: pulumi.ComponentResourceOptions) {
    super("klutch:bind:AppClusterBinding", name, {}, opts);
    const labels = { ...args.labels, "klutch.anynines.com/app-cluster": args.appCluster };
    const cp = { parent: this, provider: args.controlPlaneProvider };
    const cpAfterCrds = { ...cp, dependsOn: args.controlPlaneDependsOn ?? [] };
    const app = { parent: this, provider: args.appClusterProvider };
    const skipAwait = args.skipAwait ? { "pulumi.com/skipAwait": "true" } : undefined;
    this.boundApis = args.apis.map(apiObjectName);

    // --- control plane: the consumer's side of the binding ---
    const ns = new k8s.core.v1.Namespace(
      `${name}-consumer-namespace`,
      { metadata: { name: consumerNamespace(args.namespacePrefix, args.appCluster), labels } },
      cp,
    );
    const namespace = ns.metadata.name;
    this.consumerNamespace = namespace;
    const account = new k8s.core.v1.ServiceAccount(
      `${name}-consumer-account`,
      { metadata: { name: KONNECTOR, namespace, labels } },
      cp,
    );
    // A long-lived token the token controller fills in; the provider waits for it.
    const token = new k8s.core.v1.Secret(
      `${name}-consumer-token`,
      {
        metadata: {
          name: `${KONNECTOR}-token`,
          namespace,
          labels,
          annotations: { "kubernetes.io/service-account.name": account.metadata.name },
        },
        type: "kubernetes.io/service-account-token",
      },
      cp,
    );
    const role = new k8s.rbac.v1.Role(
      `${name}-consumer-role`,
      { metadata: { name: CONSUMER_ROLE, namespace, labels }, rules: consumerRules(args.apis) },
      cp,
    );
    new k8s.rbac.v1.RoleBinding(
      `${name}-consumer-role-binding`,
      {
        metadata: { name: CONSUMER_ROLE, namespace, labels },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: role.metadata.name },
        subjects: [{ kind: "ServiceAccount", name: account.metadata.name, namespace }],
      },
      cp,
    );

    const endpoint = pulumi.output(args.controlPlane);
    this.kubeconfig = pulumi.secret(
      pulumi.all([endpoint, token.data, namespace]).apply(([e, data, nsName]) =>
        renderConsumerKubeconfig({
          name: `klutch-${args.appCluster}`,
          server: e.address,
          caPem: e.caPem,
          token: Buffer.from(data?.token ?? "", "base64").toString("utf8"),
          namespace: nsName,
        }),
      ),
    );

    const kubeconfigSecret = new k8s.core.v1.Secret(
      `${name}-consumer-kubeconfig`,
      {
        metadata: { name: KUBECONFIG_SECRET, namespace, labels },
        stringData: { [KUBECONFIG_KEY]: this.kubeconfig },
      },
      cp,
    );
    new k8s.apiextensions.CustomResource(
      `${name}-cluster-binding`,
      {
        apiVersion: "klutch.anynines.com/v1alpha1",
        kind: "ClusterBinding",
        metadata: { name: CLUSTER_BINDING_NAME, namespace, labels },
        spec: {
          kubeconfigSecretRef: { name: kubeconfigSecret.metadata.name, key: KUBECONFIG_KEY },
          providerPrettyName: args.prettyName,
        },
      },
      cpAfterCrds,
    );
    for (const api of args.apis) {
      new k8s.apiextensions.CustomResource(
        `${name}-request-${api.resource}`,
        {
          apiVersion: "klutch.anynines.com/v1alpha1",
          kind: "APIServiceExportRequest",
          metadata: { name: apiObjectName(api), namespace, labels },
          spec: exportRequestSpec(api),
        },
        cpAfterCrds,
      );
    }

    // --- app cluster: the konnector ---
    const konnectorNs =
      args.createKonnectorNamespace === false
        ? pulumi.output(KONNECTOR_NAMESPACE)
        : new k8s.core.v1.Namespace(
            `${name}-konnector-namespace`,
            { metadata: { name: KONNECTOR_NAMESPACE, labels } },
            app,
          ).metadata.name;
    const konnector = new k8s.core.v1.ServiceAccount(
      `${name}-konnector-account`,
      { metadata: { name: KONNECTOR, namespace: konnectorNs, labels } },
      app,
    );
    const clusterRole = new k8s.rbac.v1.ClusterRole(
      `${name}-konnector-role`,
      { metadata: { name: KONNECTOR, labels }, rules: konnectorRules(args.apis) },
      app,
    );
    new k8s.rbac.v1.ClusterRoleBinding(
      `${name}-konnector-role-binding`,
      {
        metadata: { name: KONNECTOR, labels },
        roleRef: {
          apiGroup: "rbac.authorization.k8s.io",
          kind: "ClusterRole",
          name: clusterRole.metadata.name,
        },
        subjects: [{ kind: "ServiceAccount", name: konnector.metadata.name, namespace: konnectorNs }],
      },
      app,
    );
    const nsRole = new k8s.rbac.v1.Role(
      `${name}-konnector-namespace-role`,
      { metadata: { name: KONNECTOR, namespace: konnectorNs, labels }, rules: konnectorNamespaceRules() },
      app,
    );
    new k8s.rbac.v1.RoleBinding(
      `${name}-konnector-namespace-role-binding`,
      {
        metadata: { name: KONNECTOR, namespace: konnectorNs, labels },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: nsRole.metadata.name },
        subjects: [{ kind: "ServiceAccount", name: konnector.metadata.name, namespace: konnectorNs }],
      },
      app,
    );
    const appKubeconfig = new k8s.core.v1.Secret(
      `${name}-konnector-kubeconfig`,
      {
        metadata: { name: KUBECONFIG_SECRET, namespace: konnectorNs, labels },
        stringData: { [KUBECONFIG_KEY]: this.kubeconfig },
      },
      app,
    );
    const selector = { "app.kubernetes.io/name": KONNECTOR };
    new k8s.apps.v1.Deployment(
      `${name}-konnector`,
      {
        metadata: { name: KONNECTOR, namespace: konnectorNs, labels, annotations: skipAwait },
        spec: {
          replicas: 1,
          selector: { matchLabels: selector },
          template: {
            metadata: { labels: { ...labels, ...selector } },
            spec: {
              serviceAccountName: konnector.metadata.name,
              securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
              containers: [
                {
                  name: KONNECTOR,
                  image: args.konnectorImage,
                  env: [
                    { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
                    { name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
                  ],
                  ports: [{ name: "health", containerPort: 8080 }],
                  readinessProbe: { httpGet: { path: "/healthz", port: "health" } },
                  securityContext: {
                    allowPrivilegeEscalation: false,
                    readOnlyRootFilesystem: true,
                    capabilities: { drop: ["ALL"] },
                  },
                },
              ],
            },
          },
        },
      },
      app,
    );

    // The konnector brings this CRD along upstream; Pulumi needs it before the bindings.
    const crd = new k8s.apiextensions.v1.CustomResourceDefinition(
      `${name}-apiservicebindings-crd`,
      apiServiceBindingCrd(labels),
      app,
    );
    for (const api of args.apis) {
      new k8s.apiextensions.CustomResource(
        `${name}-binding-${api.resource}`,
        {
          apiVersion: "klutch.anynines.com/v1alpha1",
          kind: "APIServiceBinding",
          metadata: { name: apiObjectName(api), namespace: konnectorNs, labels },
          spec: serviceBindingSpec(api),
        },
        { ...app, dependsOn: [crd, appKubeconfig] },
      );
    }

    this.registerOutputs({ kubeconfig: this.kubeconfig, consumerNamespace: this.consumerNamespace });
  }
}
