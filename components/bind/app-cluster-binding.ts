import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { ExportedApiConfig } from "../../lib/config/schema";
import {
  BINDER_ACCOUNT,
  CLUSTER_BINDING_NAME,
  KONNECTOR,
  KONNECTOR_NAMESPACE,
  KONNECTOR_ROLE,
  KUBECONFIG_KEY,
  KUBECONFIG_SECRET,
  IDENTITY_ANNOTATION,
  apiObjectName,
  bindingIdentity,
  clusterId,
  consumerNamespace,
  exportRequestSpec,
  renderConsumerKubeconfig,
  serviceBindingSpec,
} from "../../lib/bind/app-cluster-plan";
import { bindingCrdFor } from "../../lib/bind/crds";
import { konnectorClusterRoleRules, konnectorRoleRules } from "../../lib/bind/rbac";
import type { BindRelease } from "../../lib/bind/upstream/release";
import { ExportRequest } from "../../providers/dynamic/export-request";

export interface AppClusterBindingArgs {
  /** The app cluster's name in the environment config. */
  appCluster: string;
  controlPlaneProvider: k8s.Provider;
  /** The control plane's admin kubeconfig (a secret), for the one-shot export requests. */
  controlPlaneKubeconfig: pulumi.Input<string>;
  appClusterProvider: k8s.Provider;
  /** The backend's namespace prefix (bind.namespacePrefix). */
  namespacePrefix: string;
  prettyName: string;
  /** The exported APIs this app cluster binds. */
  apis: ExportedApiConfig[];
  /** The control plane API address and CA the konnector uses. */
  controlPlane: pulumi.Input<{ address: string; caPem: string }>;
  release: BindRelease;
  konnectorImage: string;
  /** Wait for the backend to turn each request into an APIServiceExport. */
  awaitExports: boolean;
  /** Create the konnector's namespace on the app cluster; false when the caller made it. */
  createKonnectorNamespace?: boolean;
  /**
   * Who binds this app cluster interactively: the OIDC subject, and the UID of the app
   * cluster's klutch-bind namespace when the caller made it (else this component's own). The
   * binding's namespace is annotated as the backend files its own, so /bind finds it.
   */
  identity?: { subject: string; konnectorNamespaceUid?: pulumi.Input<string> };
  labels?: Record<string, string>;
  /** Objects that must exist first on the control plane (the bind CRDs). */
  controlPlaneDependsOn?: pulumi.Input<pulumi.Resource>[];
  skipAwait?: boolean;
}

/**
 * Binds one app cluster to the control plane without a browser login, doing what the
 * backend's /bind handler and `kubectl bind` do for a user (see lib/bind/app-cluster-plan.ts):
 * on the control plane the binding's namespace, the klutch-binder identity and its token, the
 * kubeconfig Secret, ClusterBinding `cluster` and one export request per API; on the app
 * cluster the konnector (RBAC from the contract table instead of upstream's `*`), the same
 * kubeconfig Secret and one APIServiceBinding per API. RoleBindings, the klutch-binder roles,
 * exports and service namespaces are the backend's controllers' to make.
 */
export class AppClusterBinding extends pulumi.ComponentResource {
  /** The klutch-binder identity's kubeconfig for the control plane; a secret. */
  public readonly kubeconfig: pulumi.Output<string>;
  /** The binding's namespace on the control plane (<cns>). */
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

    // --- app cluster: the konnector's namespace, whose UID is the cluster's ID for /bind ---
    const ownKonnectorNs =
      args.createKonnectorNamespace === false
        ? undefined
        : new k8s.core.v1.Namespace(
            `${name}-konnector-namespace`,
            { metadata: { name: KONNECTOR_NAMESPACE, labels } },
            app,
          );
    const konnectorNs = ownKonnectorNs?.metadata.name ?? pulumi.output(KONNECTOR_NAMESPACE);

    // --- control plane: what /bind makes (kubernetes/resources/*.go) ---
    const identity = args.identity;
    // Someone else's namespace (the caller's, or one kubectl bind made) is read for its UID.
    const identityUid =
      identity &&
      (identity.konnectorNamespaceUid ??
        ownKonnectorNs?.metadata.uid ??
        k8s.core.v1.Namespace.get(`${name}-konnector-namespace`, KONNECTOR_NAMESPACE, app).metadata.uid);
    const annotations = identity
      ? pulumi
          .output(identityUid!)
          .apply((uid) => ({ [IDENTITY_ANNOTATION]: bindingIdentity(identity.subject, clusterId(uid)) }))
      : undefined;
    const ns = new k8s.core.v1.Namespace(
      `${name}-consumer-namespace`,
      {
        metadata: {
          name: consumerNamespace(args.namespacePrefix, args.appCluster),
          labels,
          ...(annotations ? { annotations } : {}),
        },
      },
      cp,
    );
    const namespace = ns.metadata.name;
    this.consumerNamespace = namespace;
    const account = new k8s.core.v1.ServiceAccount(
      `${name}-binder-account`,
      { metadata: { name: BINDER_ACCOUNT, namespace, labels } },
      cp,
    );
    // The long-lived token Secret /bind makes (resources/secret.go); the token controller fills it.
    const token = new k8s.core.v1.Secret(
      `${name}-binder-token`,
      {
        metadata: {
          name: BINDER_ACCOUNT,
          namespace,
          labels,
          annotations: { "kubernetes.io/service-account.name": account.metadata.name },
        },
        type: "kubernetes.io/service-account-token",
      },
      cp,
    );

    const endpoint = pulumi.output(args.controlPlane);
    this.kubeconfig = pulumi.secret(
      pulumi.all([endpoint, token.data, namespace]).apply(([e, data, nsName]) =>
        renderConsumerKubeconfig({
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
    const clusterBinding = new k8s.apiextensions.CustomResource(
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
      new ExportRequest(
        `${name}-request-${api.resource}`,
        {
          kubeconfig: args.controlPlaneKubeconfig,
          namespace,
          name: apiObjectName(api),
          spec: exportRequestSpec(api),
          labels,
          awaitExport: args.awaitExports,
        },
        {
          parent: this,
          dependsOn: [...(args.controlPlaneDependsOn ?? []), clusterBinding],
        },
      );
    }

    // --- app cluster: what `kubectl bind` makes (bind/deploy/konnector, plugin/*.go) ---
    const konnector = new k8s.core.v1.ServiceAccount(
      `${name}-konnector-account`,
      { metadata: { name: KONNECTOR, namespace: konnectorNs, labels } },
      app,
    );
    const clusterRole = new k8s.rbac.v1.ClusterRole(
      `${name}-konnector-role`,
      { metadata: { name: KONNECTOR_ROLE, labels }, rules: konnectorClusterRoleRules(args.apis) },
      app,
    );
    new k8s.rbac.v1.ClusterRoleBinding(
      `${name}-konnector-role-binding`,
      {
        metadata: { name: KONNECTOR_ROLE, labels },
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
      {
        metadata: { name: KONNECTOR_ROLE, namespace: konnectorNs, labels },
        rules: konnectorRoleRules(args.apis),
      },
      app,
    );
    new k8s.rbac.v1.RoleBinding(
      `${name}-konnector-namespace-role-binding`,
      {
        metadata: { name: KONNECTOR_ROLE, namespace: konnectorNs, labels },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: nsRole.metadata.name },
        subjects: [{ kind: "ServiceAccount", name: konnector.metadata.name, namespace: konnectorNs }],
      },
      app,
    );
    // The konnector copies the control plane's Secret kubeconfig (data and type) over this one
    // on every heartbeat; both hold the same text, so the copy changes nothing.
    const appKubeconfig = new k8s.core.v1.Secret(
      `${name}-konnector-kubeconfig`,
      {
        metadata: { name: KUBECONFIG_SECRET, namespace: konnectorNs, labels },
        stringData: { [KUBECONFIG_KEY]: this.kubeconfig },
      },
      app,
    );
    // The konnector PUTs its own copy of this CRD at every start (bind/deploy/crd/bootstrap.go),
    // replacing labels and annotations. Pulumi makes it once, before the konnector and the
    // bindings need it, equal to the release's and without labels, and then leaves it to the
    // konnector instead of fighting it.
    const crd = new k8s.apiextensions.v1.CustomResourceDefinition(
      `${name}-apiservicebindings-crd`,
      bindingCrdFor(args.release),
      { ...app, ignoreChanges: ["metadata.labels", "metadata.annotations", "spec"] },
    );
    const selector = { app: KONNECTOR };
    new k8s.apps.v1.Deployment(
      `${name}-konnector`,
      {
        metadata: { name: KONNECTOR, namespace: konnectorNs, labels, annotations: skipAwait },
        spec: {
          // Upstream runs two; they elect a leader over Lease klutch-bind.
          replicas: 2,
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
                  // /healthz on 8080 is hard-coded in the konnector (pkg/konnector/healthz).
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
      { ...app, dependsOn: [crd, appKubeconfig] },
    );

    for (const api of args.apis) {
      new k8s.apiextensions.CustomResource(
        `${name}-binding-${api.resource}`,
        {
          apiVersion: "klutch.anynines.com/v1alpha1",
          kind: "APIServiceBinding",
          metadata: { name: apiObjectName(api), labels },
          spec: serviceBindingSpec(api),
        },
        { ...app, dependsOn: [crd, appKubeconfig] },
      );
    }

    this.registerOutputs({ kubeconfig: this.kubeconfig, consumerNamespace: this.consumerNamespace });
  }
}
