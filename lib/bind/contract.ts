import type { ExportedApiConfig } from "../config/schema";
import type { PolicyRule } from "../kube/policy-rule";
import { BIND_RELEASES, type BindRelease } from "./upstream/release";

/**
 * The Kubernetes API calls the klutch-bind konnector and example backend make, as data: one
 * row per call, read from anynines/klutchio `bind/` at the releases in `releases` (v1.4.0 and
 * v1.5.0 ship the same konnector and backend code). The RBAC this project creates is derived
 * from these rows (see rbac.ts), and the conformance e2e (test/e2e/bindings.test.ts) replays
 * every row as a real request with the credentials `pulumi up` made.
 *
 * Paths in `source` are relative to the klutchio repository. "<cns>" is a cluster binding's
 * namespace on the control plane (the konnector takes it from its kubeconfig's context);
 * "<cns>-<ns>" the namespace the backend makes for consumer namespace <ns>.
 */

export type Verb = "get" | "list" | "watch" | "create" | "update" | "patch" | "delete";

/**
 * The backend's `--consumer-scope` (contrib/example-backend/options/options.go). Namespaced is
 * what this project runs; Cluster is modelled from the source so that validation can say what
 * it would grant (see clusterWideGrants), and is refused.
 */
export const CONSUMER_SCOPES = ["Namespaced", "Cluster"] as const;
export type ConsumerScope = (typeof CONSUMER_SCOPES)[number];

/** Where a call lands. */
export type NamespaceRef =
  /** A cluster-scoped object. */
  | "cluster"
  /** A collection across all namespaces (list/watch) or any namespace. */
  | "all"
  /** The konnector's own namespace on the app cluster (klutch-bind). */
  | "konnector"
  /** The cluster binding's namespace <cns> on the control plane. */
  | "cluster-namespace"
  /** <cns>-<ns> on the control plane, one per consumer namespace. */
  | "service-namespace";

/** What is called: a fixed resource, or every bound API / permission claim of the binding. */
export type Target = { group: string; resource: string } | "bound" | "claim";

/** The RBAC object that grants a row; the first three are this project's, the others the backend's. */
export type Grant =
  /** ClusterRole klutch-bind-konnector on the app cluster (ours; upstream binds `*`). */
  | "konnector-cluster-role"
  /** Role klutch-bind-konnector in klutch-bind on the app cluster (ours). */
  | "konnector-role"
  /** ClusterRole klutch-bind-backend on the control plane (ours; upstream binds cluster-admin). */
  | "backend-cluster-role"
  /** ClusterRole klutch-binder, which the backend writes at every start, bound in <cns>. */
  | "klutch-binder"
  /** ClusterRole klutch-binder-<cns>, which the backend writes per binding, bound in each <cns>-<ns>. */
  | "klutch-binder-cns"
  /**
   * The same ClusterRole bound cluster-wide by ClusterRoleBinding klutch-binder-<cns>, which the
   * backend makes at Cluster scope instead of the per-namespace RoleBindings.
   */
  | "klutch-binder-cluster";

/**
 * The object name a row is limited to: a fixed name, or a placeholder resolved per binding:
 * "<cns>" (the binding's namespace) or "<bound-crd>" (each bound API's CRD).
 */
export type NameRef = string;

export interface ContractRow {
  id: string;
  actor: "konnector" | "backend";
  cluster: "app" | "control-plane";
  namespace: NamespaceRef;
  target: Target;
  subresource?: "status";
  /** The one object the call names, when it names one. */
  name?: NameRef;
  verbs: Verb[];
  /**
   * Verbs upstream calls here that this project's RBAC refuses on purpose (the reason is in
   * `why`); the e2e replays them and expects 403.
   */
  refused?: Verb[];
  grantedBy: Grant;
  why: string;
  source: string;
  /** The consumer scopes the row holds at; both unless it says otherwise. */
  scopes: readonly ConsumerScope[];
  releases: readonly BindRelease[];
}

const BIND = "klutch.anynines.com";
const CRDS = { group: "apiextensions.k8s.io", resource: "customresourcedefinitions" };
const RBAC = "rbac.authorization.k8s.io";
const ALL: readonly BindRelease[] = BIND_RELEASES;
const KONNECTOR_SRC = "bind/pkg/konnector";
const BACKEND_SRC = "bind/contrib/example-backend";

/** The APIServiceBinding CRD the konnector bootstraps at start. */
export const BINDING_CRD_NAME = `apiservicebindings.${BIND}`;
/** Leader election lease of the konnector (--lease-name default). */
export const KONNECTOR_LEASE = "klutch-bind";
/** Names the backend uses per cluster binding (kubernetes/resources/resources.go). */
export const BINDER = "klutch-binder";
export const BINDING_KUBECONFIG_SECRET = "kubeconfig";
export const CLUSTER_BINDING = "cluster";

type RowInput = Omit<ContractRow, "releases" | "scopes"> & { scopes?: readonly ConsumerScope[] };
const row = (r: RowInput): ContractRow => ({ scopes: CONSUMER_SCOPES, ...r, releases: ALL });
const NAMESPACED: readonly ConsumerScope[] = ["Namespaced"];
const CLUSTER: readonly ConsumerScope[] = ["Cluster"];
const SERVICE_NAMESPACE_SRC = `${BACKEND_SRC}/controllers/servicenamespace/servicenamespace_reconcile.go`;

/** What the konnector calls on the app cluster, where it runs. */
const konnectorOnAppCluster: ContractRow[] = [
  row({
    id: "K1",
    actor: "konnector",
    cluster: "app",
    namespace: "cluster",
    target: CRDS,
    name: BINDING_CRD_NAME,
    verbs: ["get", "create", "update"],
    grantedBy: "konnector-cluster-role",
    why: "CRD bootstrap at start, in every replica: create the APIServiceBinding CRD, or update it to the binary's own copy; then poll get until Established",
    source: "bind/pkg/konnector/server.go (PrepareRun); bind/deploy/crd/bootstrap.go",
  }),
  row({
    id: "K2",
    actor: "konnector",
    cluster: "app",
    namespace: "konnector",
    target: { group: "coordination.k8s.io", resource: "leases" },
    name: KONNECTOR_LEASE,
    verbs: ["get", "create", "update"],
    grantedBy: "konnector-role",
    why: "leader election (Lease klutch-bind in $POD_NAMESPACE)",
    source: "bind/cmd/konnector/cmd/leaderelection.go",
  }),
  row({
    id: "K3",
    actor: "konnector",
    cluster: "app",
    namespace: "cluster",
    target: { group: BIND, resource: "apiservicebindings" },
    verbs: ["list", "watch", "patch"],
    grantedBy: "konnector-cluster-role",
    why: "informer over all APIServiceBindings; the committer merge-patches metadata and spec",
    source: `${KONNECTOR_SRC}/server.go; bind/pkg/committer/committer.go`,
  }),
  row({
    id: "K4",
    actor: "konnector",
    cluster: "app",
    namespace: "cluster",
    target: { group: BIND, resource: "apiservicebindings" },
    subresource: "status",
    verbs: ["update", "patch"],
    grantedBy: "konnector-cluster-role",
    why: "SecretValid/Connected/providerPrettyName by merge patch; InformersSynced and Heartbeating by UpdateStatus",
    source: `${KONNECTOR_SRC}/controllers/servicebinding; ${KONNECTOR_SRC}/controllers/cluster/cluster_controller.go; ${KONNECTOR_SRC}/controllers/cluster/clusterbinding/clusterbinding_controller.go`,
  }),
  row({
    id: "K5",
    actor: "konnector",
    cluster: "app",
    namespace: "all",
    target: { group: "", resource: "secrets" },
    verbs: ["list", "watch"],
    grantedBy: "konnector-cluster-role",
    why: "the top-level Secret informer is cluster-wide and unfiltered (finds each binding's kubeconfig); without it no informer syncs",
    source: `${KONNECTOR_SRC}/server.go; ${KONNECTOR_SRC}/konnector_controller.go`,
  }),
  row({
    id: "K6",
    actor: "konnector",
    cluster: "app",
    namespace: "konnector",
    target: { group: "", resource: "secrets" },
    name: BINDING_KUBECONFIG_SECRET,
    verbs: ["update"],
    grantedBy: "konnector-role",
    why: "ensureConsumerSecret copies the provider's kubeconfig Secret (data and type) over the binding's Secret on every ClusterBinding reconcile. Its create path (Secret missing) swaps name and namespace at these releases (fixed on main) and is never taken here, because Pulumi creates the Secret",
    source: `${KONNECTOR_SRC}/controllers/cluster/clusterbinding/clusterbinding_reconcile.go`,
  }),
  row({
    id: "K7",
    actor: "konnector",
    cluster: "app",
    namespace: "cluster",
    target: { group: "", resource: "namespaces" },
    verbs: ["list", "watch"],
    grantedBy: "konnector-cluster-role",
    why: "namespacedeletion: a consumer namespace that is gone removes its APIServiceNamespace",
    source: `${KONNECTOR_SRC}/server.go`,
  }),
  row({
    id: "K8",
    actor: "konnector",
    cluster: "app",
    namespace: "cluster",
    target: CRDS,
    verbs: ["list", "watch", "create"],
    grantedBy: "konnector-cluster-role",
    why: "CRD informer; the bound APIs' CRDs are created from each APIServiceExport (create cannot be limited by name)",
    source: `${KONNECTOR_SRC}/server.go; ${KONNECTOR_SRC}/controllers/cluster/servicebinding/servicebinding_reconcile.go`,
  }),
  row({
    id: "K9",
    actor: "konnector",
    cluster: "app",
    namespace: "cluster",
    target: CRDS,
    name: "<bound-crd>",
    verbs: ["update"],
    grantedBy: "konnector-cluster-role",
    why: "ensureCRDs updates a bound CRD it owns (controller reference to the APIServiceBinding)",
    source: `${KONNECTOR_SRC}/controllers/cluster/servicebinding/servicebinding_reconcile.go`,
  }),
  row({
    id: "K10",
    actor: "konnector",
    cluster: "app",
    namespace: "all",
    target: "bound",
    verbs: ["list", "watch", "create", "update"],
    grantedBy: "konnector-cluster-role",
    why: "dynamic informer per export; finalizer klutch.anynines.com/syncer added and removed by update; the adopt controller creates consumer copies of provider objects and updates the bound annotation",
    source: `${KONNECTOR_SRC}/controllers/cluster/serviceexport/serviceexport_reconcile.go; .../spec/spec_reconcile.go; .../adopt/adopt_reconcile.go`,
  }),
  row({
    id: "K11",
    actor: "konnector",
    cluster: "app",
    namespace: "all",
    target: "bound",
    subresource: "status",
    verbs: ["update"],
    grantedBy: "konnector-cluster-role",
    why: "the provider object's status is copied to the consumer object with UpdateStatus",
    source: `${KONNECTOR_SRC}/controllers/cluster/serviceexport/status/status_reconcile.go`,
  }),
  row({
    id: "K12",
    actor: "konnector",
    cluster: "app",
    namespace: "all",
    target: "claim",
    verbs: ["list", "watch", "get", "create", "update", "delete"],
    grantedBy: "konnector-cluster-role",
    why: "per accepted permission claim: a cluster-wide informer, and copies of provider-owned objects kept in the consumer namespace (live get, create, update, delete)",
    source: `${KONNECTOR_SRC}/controllers/cluster/serviceexport/serviceexport_reconcile.go; .../claimedresources/`,
  }),
];

/** What the konnector calls on the control plane, as the binding's klutch-binder identity. */
const konnectorOnControlPlane: ContractRow[] = [
  row({
    id: "K13",
    actor: "konnector",
    cluster: "control-plane",
    namespace: "cluster-namespace",
    target: { group: BIND, resource: "clusterbindings" },
    verbs: ["get", "list", "watch"],
    grantedBy: "klutch-binder",
    why: "heartbeat informer; a live get of ClusterBinding cluster copies providerPrettyName into each APIServiceBinding",
    source: `${KONNECTOR_SRC}/controllers/cluster/cluster_controller.go; .../servicebinding/servicebinding_controller.go`,
  }),
  row({
    id: "K14",
    actor: "konnector",
    cluster: "control-plane",
    namespace: "cluster-namespace",
    target: { group: BIND, resource: "clusterbindings" },
    subresource: "status",
    verbs: ["patch"],
    grantedBy: "klutch-binder",
    why: "heartbeat: lastHeartbeatTime, heartbeatInterval, konnectorVersion and conditions by merge patch",
    source: `${KONNECTOR_SRC}/controllers/cluster/clusterbinding/`,
  }),
  row({
    id: "K15",
    actor: "konnector",
    cluster: "control-plane",
    namespace: "cluster-namespace",
    target: { group: "", resource: "secrets" },
    verbs: ["list", "watch"],
    grantedBy: "klutch-binder",
    why: "informer over the Secrets of <cns>, whether or not an API claims secrets; it reads ClusterBinding.spec.kubeconfigSecretRef from it",
    source: `${KONNECTOR_SRC}/controllers/cluster/clusterbinding/clusterbinding_controller.go`,
  }),
  row({
    id: "K16",
    actor: "konnector",
    cluster: "control-plane",
    namespace: "cluster-namespace",
    target: { group: BIND, resource: "apiserviceexports" },
    verbs: ["list", "watch"],
    grantedBy: "klutch-binder",
    why: "informer over the binding's exports",
    source: `${KONNECTOR_SRC}/controllers/cluster/cluster_controller.go`,
  }),
  row({
    id: "K17",
    actor: "konnector",
    cluster: "control-plane",
    namespace: "cluster-namespace",
    target: { group: BIND, resource: "apiserviceexports" },
    subresource: "status",
    verbs: ["patch"],
    grantedBy: "klutch-binder",
    why: "Connected/ConsumerInSync, the CRD's conditions, acceptedNames and storedVersions by merge patch",
    source: `${KONNECTOR_SRC}/controllers/cluster/serviceexport/serviceexport_controller.go`,
  }),
  row({
    id: "K18",
    actor: "konnector",
    cluster: "control-plane",
    namespace: "cluster-namespace",
    target: { group: BIND, resource: "apiservicenamespaces" },
    verbs: ["list", "watch", "create", "delete"],
    grantedBy: "klutch-binder",
    why: "one APIServiceNamespace per consumer namespace, created before its first object syncs and deleted with the namespace",
    source: `${KONNECTOR_SRC}/controllers/cluster/serviceexport/spec/spec_reconcile.go; .../namespacedeletion/namespacedeletion_controller.go`,
  }),
  row({
    id: "K19",
    actor: "konnector",
    cluster: "control-plane",
    namespace: "cluster-namespace",
    target: { group: "", resource: "namespaces" },
    name: "<cns>",
    verbs: ["get"],
    grantedBy: "klutch-binder",
    why: "before syncing an export it reads its own cluster namespace for the UID (owner of cluster-scoped copies); an error stops the export's sync",
    source: `${KONNECTOR_SRC}/controllers/cluster/serviceexport/serviceexport_reconcile.go (ensureControllers)`,
  }),
  row({
    id: "K20",
    actor: "konnector",
    cluster: "control-plane",
    namespace: "service-namespace",
    target: "bound",
    verbs: ["list", "watch", "create", "patch", "delete"],
    grantedBy: "klutch-binder-cns",
    why: "consumer objects synced to <cns>-<ns>: created, then server-side applied (field manager klutch.anynines.com, force), deleted with the consumer's; the provider-side informer is one per service namespace (multinsinformer) because the export's informerScope is Namespaced",
    source: `${KONNECTOR_SRC}/controllers/cluster/serviceexport/spec/; .../multinsinformer/informer.go; .../status/`,
    scopes: NAMESPACED,
  }),
  row({
    id: "K21",
    actor: "konnector",
    cluster: "control-plane",
    namespace: "service-namespace",
    target: "claim",
    verbs: ["list", "watch", "create", "update", "delete"],
    grantedBy: "klutch-binder-cns",
    why: 'claimed objects: owner annotation set by update; consumer-owned objects created, updated and deleted on the provider. The claim\'s informer is per service namespace: the APIServiceBinding CRD defaults selector.namespaces to ["*"], and only a nil list makes it cluster-wide',
    source: `${KONNECTOR_SRC}/controllers/cluster/serviceexport/claimedresources/; ${KONNECTOR_SRC}/controllers/cluster/serviceexport/serviceexport_reconcile.go (syncClusterScoped); bind/deploy/crd/klutch.anynines.com_apiservicebindings.yaml`,
    scopes: NAMESPACED,
  }),
  row({
    id: "K20C",
    actor: "konnector",
    cluster: "control-plane",
    namespace: "all",
    target: "bound",
    verbs: ["list", "watch"],
    grantedBy: "klutch-binder-cluster",
    why: "Cluster scope: the backend sets the export's informerScope to Cluster, and the konnector then lists and watches each bound resource in every namespace of the control plane (it skips other consumers' objects only after receiving them)",
    source: `${KONNECTOR_SRC}/controllers/cluster/serviceexport/serviceexport_reconcile.go (ensureControllers); ${KONNECTOR_SRC}/controllers/cluster/serviceexport/adopt/adopt_controller.go (enqueueProvider); ${BACKEND_SRC}/controllers/serviceexportrequest/serviceexportrequest_reconcile.go`,
    scopes: CLUSTER,
  }),
  row({
    id: "K20W",
    actor: "konnector",
    cluster: "control-plane",
    namespace: "service-namespace",
    target: "bound",
    verbs: ["create", "patch", "delete"],
    grantedBy: "klutch-binder-cluster",
    why: "Cluster scope: consumer objects still land in <cns>-<ns> (through the APIServiceNamespace), but the backend makes no RoleBinding there, so only the ClusterRoleBinding allows the writes",
    source: `${KONNECTOR_SRC}/controllers/cluster/serviceexport/spec/spec_reconcile.go; ${SERVICE_NAMESPACE_SRC}`,
    scopes: CLUSTER,
  }),
  row({
    id: "K21C",
    actor: "konnector",
    cluster: "control-plane",
    namespace: "service-namespace",
    target: "claim",
    verbs: ["list", "watch", "create", "update", "delete"],
    grantedBy: "klutch-binder-cluster",
    why: "Cluster scope: claimed objects in <cns>-<ns>, allowed by the ClusterRoleBinding for want of a RoleBinding",
    source: `${KONNECTOR_SRC}/controllers/cluster/serviceexport/claimedresources/; ${SERVICE_NAMESPACE_SRC}`,
    scopes: CLUSTER,
  }),
];

/** What the backend calls on the control plane, where it runs. */
const backendOnControlPlane: ContractRow[] = [
  row({
    id: "B1",
    actor: "backend",
    cluster: "control-plane",
    namespace: "cluster",
    target: { group: RBAC, resource: "clusterroles" },
    name: BINDER,
    verbs: ["get", "create", "update"],
    grantedBy: "backend-cluster-role",
    why: "bootstrap at every start: ClusterRole klutch-binder is created, or overwritten with the binary's copy",
    source: `${BACKEND_SRC}/deploy/bootstrap.go; ${BACKEND_SRC}/deploy/01-clusterrole.yaml; bind/pkg/bootstrap/bootstrap.go`,
  }),
  row({
    id: "B2",
    actor: "backend",
    cluster: "control-plane",
    namespace: "cluster",
    target: { group: "", resource: "namespaces" },
    verbs: ["list", "watch", "get", "create", "delete"],
    grantedBy: "backend-cluster-role",
    why: "namespace informer; /bind creates <cns> (generateName <namespace-prefix>-); the servicenamespace controller creates and deletes <cns>-<ns>",
    source: `${BACKEND_SRC}/kubernetes/resources/namespace.go; ${BACKEND_SRC}/controllers/servicenamespace/`,
  }),
  row({
    id: "B3",
    actor: "backend",
    cluster: "control-plane",
    namespace: "all",
    target: { group: RBAC, resource: "roles" },
    verbs: ["list", "watch"],
    grantedBy: "backend-cluster-role",
    why: "RBAC informers, cluster-wide",
    source: `${BACKEND_SRC}/config.go`,
  }),
  row({
    id: "B4",
    actor: "backend",
    cluster: "control-plane",
    namespace: "all",
    target: { group: RBAC, resource: "rolebindings" },
    verbs: ["list", "watch", "create", "update"],
    grantedBy: "backend-cluster-role",
    why: "RoleBinding klutch-binder in <cns> (→ ClusterRole klutch-binder) and, at Namespaced scope only, in each <cns>-<ns> (→ klutch-binder-<cns>)",
    source: `${BACKEND_SRC}/controllers/clusterbinding/clusterbinding_reconcile.go; ${SERVICE_NAMESPACE_SRC}`,
  }),
  row({
    id: "B5",
    actor: "backend",
    cluster: "control-plane",
    namespace: "cluster",
    target: { group: RBAC, resource: "clusterroles" },
    verbs: ["list", "watch", "create", "update"],
    grantedBy: "backend-cluster-role",
    why: "ClusterRole klutch-binder-<cns>: the export verbs on every exported resource and permission claim of the binding (its name is generated, so update cannot be limited by name)",
    source: `${BACKEND_SRC}/controllers/clusterbinding/clusterbinding_reconcile.go (ensureRBACClusterRole)`,
  }),
  row({
    id: "B6",
    actor: "backend",
    cluster: "control-plane",
    namespace: "cluster",
    target: { group: RBAC, resource: "clusterrolebindings" },
    verbs: ["list", "watch", "delete"],
    refused: ["create", "update"],
    grantedBy: "backend-cluster-role",
    why: "ClusterRoleBinding klutch-binder-<cns> at Namespaced scope: deleted, yet created again whenever the lister has none (the function does not return after the delete; at these releases and on main). Every other reconcile would therefore bind klutch-binder-<cns> cluster-wide, giving the app cluster's identity every namespace's bound and claimed objects. Our RBAC refuses the create and update: the reconcile then returns that error and the ClusterBinding is requeued, while its status is still committed (clusterbinding_controller.go process)",
    source: `${BACKEND_SRC}/controllers/clusterbinding/clusterbinding_reconcile.go (ensureRBACClusterRoleBinding); ${BACKEND_SRC}/controllers/clusterbinding/clusterbinding_controller.go`,
    scopes: NAMESPACED,
  }),
  row({
    id: "B6C",
    actor: "backend",
    cluster: "control-plane",
    namespace: "cluster",
    target: { group: RBAC, resource: "clusterrolebindings" },
    verbs: ["list", "watch", "create", "update"],
    grantedBy: "backend-cluster-role",
    why: "Cluster scope: ClusterRoleBinding klutch-binder-<cns> binds ClusterRole klutch-binder-<cns> to the binding's klutch-binder ServiceAccount in every namespace (owner: the <cns> namespace)",
    source: `${BACKEND_SRC}/controllers/clusterbinding/clusterbinding_reconcile.go (ensureRBACClusterRoleBinding)`,
    scopes: CLUSTER,
  }),
  row({
    id: "B7",
    actor: "backend",
    cluster: "control-plane",
    namespace: "cluster-namespace",
    target: { group: "", resource: "serviceaccounts" },
    verbs: ["get", "create"],
    grantedBy: "backend-cluster-role",
    why: "/bind: ServiceAccount klutch-binder in <cns>",
    source: `${BACKEND_SRC}/kubernetes/resources/rbac.go`,
  }),
  row({
    id: "B8",
    actor: "backend",
    cluster: "control-plane",
    namespace: "cluster-namespace",
    target: { group: "", resource: "secrets" },
    verbs: ["get", "create", "update"],
    grantedBy: "backend-cluster-role",
    why: "/bind: token Secret klutch-binder (polled until the token is filled in) and Secret kubeconfig (created or updated)",
    source: `${BACKEND_SRC}/kubernetes/resources/secret.go; ${BACKEND_SRC}/kubernetes/resources/kubeconfig.go`,
  }),
  row({
    id: "B9",
    actor: "backend",
    cluster: "control-plane",
    namespace: "all",
    target: { group: BIND, resource: "clusterbindings" },
    verbs: ["list", "watch", "get", "create"],
    grantedBy: "backend-cluster-role",
    why: "informer; /bind creates ClusterBinding cluster in <cns> when missing",
    source: `${BACKEND_SRC}/kubernetes/manager.go; ${BACKEND_SRC}/kubernetes/resources/cluster_binding.go`,
  }),
  row({
    id: "B10",
    actor: "backend",
    cluster: "control-plane",
    namespace: "all",
    target: { group: BIND, resource: "clusterbindings" },
    subresource: "status",
    verbs: ["patch"],
    grantedBy: "backend-cluster-role",
    why: "the Healthy condition from the konnector's heartbeat",
    source: `${BACKEND_SRC}/controllers/clusterbinding/clusterbinding_reconcile.go`,
  }),
  row({
    id: "B11",
    actor: "backend",
    cluster: "control-plane",
    namespace: "all",
    target: { group: BIND, resource: "apiservicenamespaces" },
    verbs: ["list", "watch"],
    grantedBy: "backend-cluster-role",
    why: "servicenamespace controller's informer",
    source: `${BACKEND_SRC}/controllers/servicenamespace/servicenamespace_controller.go`,
  }),
  row({
    id: "B12",
    actor: "backend",
    cluster: "control-plane",
    namespace: "all",
    target: { group: BIND, resource: "apiservicenamespaces" },
    subresource: "status",
    verbs: ["patch"],
    grantedBy: "backend-cluster-role",
    why: "status.namespace = <cns>-<ns>",
    source: `${BACKEND_SRC}/controllers/servicenamespace/servicenamespace_reconcile.go`,
  }),
  row({
    id: "B13",
    actor: "backend",
    cluster: "control-plane",
    namespace: "all",
    target: { group: BIND, resource: "apiserviceexports" },
    verbs: ["list", "watch", "create", "patch", "delete"],
    grantedBy: "backend-cluster-role",
    why: "exports created from requests (spec.informerScope = the consumer scope), their CRD part patched when the CRD changes, deleted when the CRD is gone",
    source: `${BACKEND_SRC}/controllers/serviceexportrequest/serviceexportrequest_reconcile.go; ${BACKEND_SRC}/controllers/serviceexport/`,
  }),
  row({
    id: "B14",
    actor: "backend",
    cluster: "control-plane",
    namespace: "all",
    target: { group: BIND, resource: "apiserviceexports" },
    subresource: "status",
    verbs: ["patch"],
    grantedBy: "backend-cluster-role",
    why: "ProviderInSync",
    source: `${BACKEND_SRC}/controllers/serviceexport/`,
  }),
  row({
    id: "B15",
    actor: "backend",
    cluster: "control-plane",
    namespace: "all",
    target: { group: BIND, resource: "apiserviceexportrequests" },
    verbs: ["list", "watch", "delete"],
    grantedBy: "backend-cluster-role",
    why: "a request is deleted by the first reconcile after it is 10 minutes old, counted from creationTimestamp; nothing requeues it (no AddAfter), so that is the informers' 30-minute resync, or an earlier change to the request, its APIServiceExport or its CRD (each enqueues it)",
    source: `${BACKEND_SRC}/controllers/serviceexportrequest/serviceexportrequest_reconcile.go; ${BACKEND_SRC}/controllers/serviceexportrequest/serviceexportrequest_controller.go; ${BACKEND_SRC}/config.go (resync)`,
  }),
  row({
    id: "B16",
    actor: "backend",
    cluster: "control-plane",
    namespace: "all",
    target: { group: BIND, resource: "apiserviceexportrequests" },
    subresource: "status",
    verbs: ["patch"],
    grantedBy: "backend-cluster-role",
    why: "phase Succeeded/Failed, ExportsReady",
    source: `${BACKEND_SRC}/controllers/serviceexportrequest/serviceexportrequest_reconcile.go`,
  }),
  row({
    id: "B17",
    actor: "backend",
    cluster: "control-plane",
    namespace: "cluster",
    target: CRDS,
    verbs: ["list", "watch"],
    grantedBy: "backend-cluster-role",
    why: "CRD informer and the /resources catalogue; exports copy the CRD's versions and schema",
    source: `${BACKEND_SRC}/exporttemplate/index.go; ${BACKEND_SRC}/controllers/serviceexportrequest/`,
  }),
  row({
    id: "B18",
    actor: "backend",
    cluster: "control-plane",
    namespace: "all",
    target: { group: "example-backend.klutch.anynines.com", resource: "apiserviceexporttemplates" },
    verbs: ["list"],
    grantedBy: "backend-cluster-role",
    why: "the catalogue lists templates in all namespaces on every /resources and /bind request and per export request",
    source: `${BACKEND_SRC}/exporttemplate/index.go`,
  }),
];

export const CONTRACT: readonly ContractRow[] = [
  ...konnectorOnAppCluster,
  ...konnectorOnControlPlane,
  ...backendOnControlPlane,
];

/** The rows that hold at a consumer scope. */
export const contractAt = (scope: ConsumerScope): ContractRow[] =>
  CONTRACT.filter((r) => r.scopes.includes(scope));

/**
 * ClusterRole klutch-binder as the backend writes it at every start
 * (bind/contrib/example-backend/deploy/01-clusterrole.yaml at both releases). It is the
 * backend's object, not ours; the backend must hold every rule in it to write it (RBAC
 * escalation check), so backendClusterRoleRules includes it.
 */
export function binderRules(): PolicyRule[] {
  const read = ["get", "watch", "list"];
  const all = ["create", "delete", "patch", "update", "get", "list", "watch"];
  return [
    { apiGroups: [BIND], resources: ["apiserviceexportrequests"], verbs: all },
    { apiGroups: [""], resources: ["namespaces"], verbs: ["get"] },
    { apiGroups: [""], resources: ["secrets"], verbs: read },
    { apiGroups: [BIND], resources: ["clusterbindings"], verbs: read },
    { apiGroups: [BIND], resources: ["clusterbindings/status"], verbs: ["get", "patch", "update"] },
    { apiGroups: [BIND], resources: ["apiserviceexports"], verbs: read },
    { apiGroups: [BIND], resources: ["apiserviceexports/status"], verbs: ["get", "patch", "update"] },
    { apiGroups: [BIND], resources: ["apiservicenamespaces"], verbs: all },
  ];
}

/** The verbs ClusterRole klutch-binder-<cns> grants on each exported resource and claim. */
export const EXPORT_VERBS: Verb[] = ["get", "list", "watch", "update", "patch", "delete", "create"];

/** One resource of a binding: an exported API or a permission claim. */
export interface BoundResource {
  group: string;
  resource: string;
}

/** The bound resources of a set of APIs, and their claims, without repeats, sorted. */
export function boundResources(apis: ExportedApiConfig[]): {
  bound: BoundResource[];
  claims: BoundResource[];
} {
  const uniq = (list: BoundResource[]) =>
    [...new Map(list.map((r) => [`${r.group}/${r.resource}`, r])).values()].sort((a, b) =>
      `${a.group}/${a.resource}`.localeCompare(`${b.group}/${b.resource}`),
    );
  return {
    bound: uniq(apis.map((a) => ({ group: a.group, resource: a.resource }))),
    claims: uniq(
      apis.flatMap((a) => a.permissionClaims.map((c) => ({ group: c.group, resource: c.resource }))),
    ),
  };
}

/**
 * ClusterRole klutch-binder-<cns> as the backend writes it (ensureRBACClusterRole): the export
 * verbs on every exported resource and every permission claim of the binding's exports.
 */
export function binderNamespaceRules(apis: ExportedApiConfig[]): PolicyRule[] {
  const { bound, claims } = boundResources(apis);
  return [...bound, ...claims].map((r) => ({
    apiGroups: [r.group],
    resources: [r.resource],
    verbs: EXPORT_VERBS,
  }));
}

/**
 * What an app cluster's klutch-binder identity is granted outside its own namespaces (<cns> and
 * its <cns>-<ns>) at a consumer scope: nothing at Namespaced; at Cluster, ClusterRole
 * klutch-binder-<cns> bound cluster-wide, i.e. every export verb on every bound resource and
 * every claimed resource in every namespace of the control plane, other consumers' included.
 */
export function clusterWideGrants(scope: ConsumerScope, apis: ExportedApiConfig[]): PolicyRule[] {
  const bindsClusterWide = contractAt(scope).some((r) => r.grantedBy === "klutch-binder-cluster");
  return bindsClusterWide ? binderNamespaceRules(apis) : [];
}
