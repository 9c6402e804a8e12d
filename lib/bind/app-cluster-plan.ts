import { stringify } from "yaml";
import type { AppClusterConfig, ExportedApiConfig } from "../config/schema";
import { EXPORT_VERBS, type PolicyRule } from "./backend-plan";

/**
 * What binding one app cluster consists of, as Klutch's backend would set it up after a
 * `kubectl bind` login, derived from config so that `pulumi up` does it instead. Pure.
 */

const READ = ["get", "list", "watch"];
export const KONNECTOR = "konnector";
export const KONNECTOR_NAMESPACE = "klutch-bind";
/** The Secret (and key) holding the consumer's kubeconfig, on both sides. */
export const KUBECONFIG_SECRET = "kubeconfig";
export const KUBECONFIG_KEY = "kubeconfig";
export const CONSUMER_ROLE = "klutch-consumer";
/** Klutch's ClusterBinding is a singleton per consumer namespace, named by its CRD's rule. */
export { CLUSTER_BINDING_NAME } from "./crds";

/** The consumer's namespace on the control plane: the backend's prefix and the app cluster's name. */
export function consumerNamespace(prefix: string, appCluster: string): string {
  return `${prefix}-${appCluster}`;
}

/** The exported APIs an app cluster binds: those it names, or all of them. */
export function boundApis(
  app: Pick<AppClusterConfig, "apis">,
  exported: ExportedApiConfig[],
): ExportedApiConfig[] {
  if (!app.apis) return exported;
  const wanted = new Set(app.apis);
  return exported.filter((api) => wanted.has(api.resource));
}

/** `<resource>.<group>`: how Klutch names per-API objects (and CRDs name themselves). */
export function apiObjectName(api: Pick<ExportedApiConfig, "resource" | "group">): string {
  return api.group ? `${api.resource}.${api.group}` : api.resource;
}

interface Claim {
  group: string;
  resource: string;
  owner: "Provider" | "Consumer";
}

function claimsOf(apis: ExportedApiConfig[]): Claim[] {
  const seen = new Map<string, Claim>();
  for (const api of apis) {
    for (const c of api.permissionClaims) {
      const owner = c.selector?.owner ?? "Provider";
      const key = `${c.group}/${c.resource}`;
      const prior = seen.get(key);
      // A Consumer-owned claim needs write access; it wins over a Provider-owned one.
      if (!prior || owner === "Consumer") seen.set(key, { group: c.group, resource: c.resource, owner });
    }
  }
  return [...seen.values()];
}

function byGroup(entries: { group: string; resource: string }[], verbs: string[]): PolicyRule[] {
  const groups = new Map<string, Set<string>>();
  for (const e of entries) groups.set(e.group, (groups.get(e.group) ?? new Set()).add(e.resource));
  return [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([group, resources]) => ({ apiGroups: [group], resources: [...resources].sort(), verbs }));
}

/**
 * The consumer identity's Role in its own namespace on the control plane: the bound
 * resources, the claimed objects (read for provider-owned claims, write for consumer-owned
 * ones) and the bind objects of its binding. A Role, so nothing outside that namespace
 * and nothing cluster-scoped is granted.
 */
export function consumerRules(apis: ExportedApiConfig[]): PolicyRule[] {
  const claims = claimsOf(apis);
  return [
    ...byGroup(apis, EXPORT_VERBS),
    ...byGroup(
      claims.filter((c) => c.owner === "Provider"),
      READ,
    ),
    ...byGroup(
      claims.filter((c) => c.owner === "Consumer"),
      EXPORT_VERBS,
    ),
    {
      apiGroups: ["klutch.anynines.com"],
      resources: ["apiserviceexportrequests", "apiservicenamespaces"],
      verbs: EXPORT_VERBS,
    },
    { apiGroups: ["klutch.anynines.com"], resources: ["apiserviceexports", "clusterbindings"], verbs: READ },
    {
      apiGroups: ["klutch.anynines.com"],
      resources: ["apiserviceexports/status", "clusterbindings/status"],
      verbs: ["get", "update", "patch"],
    },
  ];
}

/**
 * The konnector's ClusterRole on the app cluster: what it syncs and nothing else (upstream
 * binds it to everything). It installs the bound CRDs (changes restricted to those names),
 * mirrors the bound resources and claimed objects in consumers' namespaces, and reconciles
 * its APIServiceBindings.
 */
export function konnectorRules(apis: ExportedApiConfig[]): PolicyRule[] {
  const crdNames = apis.map(apiObjectName).sort();
  return [
    // create cannot be limited by name (the name is not known to RBAC before the object exists).
    {
      apiGroups: ["apiextensions.k8s.io"],
      resources: ["customresourcedefinitions"],
      verbs: [...READ, "create"],
    },
    {
      apiGroups: ["apiextensions.k8s.io"],
      resources: ["customresourcedefinitions"],
      verbs: ["update", "patch", "delete"],
      resourceNames: crdNames,
    },
    ...byGroup(apis, EXPORT_VERBS),
    ...byGroup(claimsOf(apis), EXPORT_VERBS),
    { apiGroups: [""], resources: ["namespaces"], verbs: READ },
    { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
    {
      apiGroups: ["klutch.anynines.com"],
      resources: ["apiservicebindings"],
      verbs: [...READ, "update", "patch"],
    },
    {
      apiGroups: ["klutch.anynines.com"],
      resources: ["apiservicebindings/status"],
      verbs: ["get", "update", "patch"],
    },
  ];
}

/** The konnector's Role in its own namespace: its kubeconfig Secret and its leader-election lease. */
export function konnectorNamespaceRules(): PolicyRule[] {
  return [
    {
      apiGroups: [""],
      resources: ["secrets"],
      verbs: ["get", "watch", "list"],
      resourceNames: [KUBECONFIG_SECRET],
    },
    { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: [...READ, "create", "update"] },
  ];
}

/** The APIServiceExportRequest recording that the consumer asked for one API. */
export function exportRequestSpec(api: ExportedApiConfig) {
  return {
    resources: [
      {
        group: api.group,
        resource: api.resource,
        versions: [api.version],
        ...(api.permissionClaims.length > 0 ? { permissionClaims: api.permissionClaims.map(claimSpec) } : {}),
      },
    ],
  };
}

function claimSpec(c: ExportedApiConfig["permissionClaims"][number]) {
  return {
    group: c.group,
    resource: c.resource,
    version: c.version,
    ...(c.selector ? { selector: { owner: c.selector.owner } } : {}),
  };
}

/** The APIServiceBinding on the app cluster, its claims accepted (config is the consent). */
export function serviceBindingSpec(api: ExportedApiConfig) {
  return {
    kubeconfigSecretRef: { name: KUBECONFIG_SECRET, namespace: KONNECTOR_NAMESPACE, key: KUBECONFIG_KEY },
    ...(api.permissionClaims.length > 0
      ? {
          permissionClaims: api.permissionClaims.map((c) => ({
            ...claimSpec(c),
            required: true,
            state: "Accepted",
          })),
        }
      : {}),
  };
}

export interface ConsumerKubeconfig {
  /** Names the cluster, user and context. */
  name: string;
  server: string;
  caPem: string;
  token: string;
  namespace: string;
}

/** A kubeconfig for the consumer identity: token auth, pinned CA, its namespace as default. */
export function renderConsumerKubeconfig(k: ConsumerKubeconfig): string {
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name: k.name,
        cluster: {
          server: k.server,
          ...(k.caPem ? { "certificate-authority-data": Buffer.from(k.caPem).toString("base64") } : {}),
        },
      },
    ],
    users: [{ name: k.name, user: { token: k.token } }],
    contexts: [{ name: k.name, context: { cluster: k.name, user: k.name, namespace: k.namespace } }],
    "current-context": k.name,
  });
}
