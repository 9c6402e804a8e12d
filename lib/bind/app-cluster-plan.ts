import { createHash } from "node:crypto";
import { stringify } from "yaml";
import type { AppClusterConfig, ExportedApiConfig } from "../config/schema";
import { BINDER, BINDING_KUBECONFIG_SECRET } from "./contract";

/**
 * What binding one app cluster consists of: what the backend's /bind handler and
 * `kubectl bind` make for an interactive user (klutchio bind/contrib/example-backend/http/
 * handler.go, kubernetes/resources/*.go, bind/pkg/kubectl/bind*), with upstream's names,
 * derived from config so that `pulumi up` does it instead. Everything else (RoleBindings,
 * klutch-binder roles, exports, service namespaces) is left to the backend's controllers. Pure.
 */

/** The konnector's ServiceAccount and namespace (bind/deploy/konnector/*.yaml). */
export const KONNECTOR = "konnector";
export const KONNECTOR_NAMESPACE = "klutch-bind";
/** Upstream names the konnector's ClusterRole(Binding) so; ours are limited to the contract. */
export const KONNECTOR_ROLE = "klutch-bind-konnector";
/**
 * The consumer's identity on the control plane: ServiceAccount klutch-binder in the binding's
 * namespace with a token Secret of the same name, the only subject the backend's controllers
 * bind (kubernetes/resources/resources.go).
 */
export const BINDER_ACCOUNT = BINDER;
/** Secret kubeconfig in the binding's namespace, named by ClusterBinding.spec.kubeconfigSecretRef. */
export const KUBECONFIG_SECRET = BINDING_KUBECONFIG_SECRET;
export const KUBECONFIG_KEY = "kubeconfig";
/** Klutch's ClusterBinding is a singleton per consumer namespace, named by its CRD's rule. */
export { CLUSTER_BINDING_NAME } from "./crds";

/**
 * How the backend finds a binding's namespace again: /bind looks the namespace up by this
 * annotation before it makes one with `generateName: <prefix>-` (contrib/example-backend/
 * kubernetes/manager.go HandleResources, indexers.go, resources/namespace.go).
 */
export const IDENTITY_ANNOTATION = "example-backend.klutch.anynines.com/identity";

/** Go's `big.Int.Text(62)` digits: 0-9, then a-z, then A-Z (math/big natconv.go). */
const BASE62 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/**
 * The cluster ID `kubectl bind` sends as `c` (plugin/bind.go ClusterID): the first six base-62
 * digits of the SHA-224 of the app cluster's `klutch-bind` namespace UID.
 */
export function clusterId(konnectorNamespaceUid: string): string {
  let n = BigInt(`0x${createHash("sha224").update(konnectorNamespaceUid).digest("hex")}`);
  let digits = "";
  do {
    digits = BASE62[Number(n % 62n)]! + digits;
    n /= 62n;
  } while (n > 0n);
  return digits.slice(0, 6);
}

/**
 * The identity the backend files a binding's namespace under: the OIDC subject (the ID token's
 * `sub`) of whoever binds, `#`, and the app cluster's ID (http/handler.go: `Subject + "#" +
 * ClusterID`).
 */
export function bindingIdentity(subject: string, clusterId: string): string {
  return `${subject}#${clusterId}`;
}

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

/**
 * The APIServiceExportRequest /bind hands back for one API (handler.go handleBind): the
 * group, resource and the template's permission claims, no versions.
 */
export function exportRequestSpec(api: ExportedApiConfig) {
  return {
    resources: [
      {
        group: api.group,
        resource: api.resource,
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

/**
 * The APIServiceBinding `kubectl bind apiservice` creates on the app cluster (plugin/
 * servicebindings.go): cluster-scoped at the pinned releases, named `<resource>.<group>`,
 * pointing at the kubeconfig Secret in klutch-bind, each claim answered; config is the
 * consent, so every claim is Accepted.
 */
export function serviceBindingSpec(api: ExportedApiConfig) {
  return {
    kubeconfigSecretRef: { name: KUBECONFIG_SECRET, namespace: KONNECTOR_NAMESPACE, key: KUBECONFIG_KEY },
    ...(api.permissionClaims.length > 0
      ? { permissionClaims: api.permissionClaims.map((c) => ({ ...claimSpec(c), state: "Accepted" })) }
      : {}),
  };
}

export interface ConsumerKubeconfig {
  server: string;
  caPem: string;
  token: string;
  /** The binding's namespace; the konnector takes its provider namespace from here. */
  namespace: string;
}

/**
 * The kubeconfig the backend writes into Secret kubeconfig (resources/kubeconfig.go): cluster,
 * user and context all named `default`, the klutch-binder token, the CA handed to konnectors,
 * and the binding's namespace as the context's namespace, which the konnector reads.
 */
export function renderConsumerKubeconfig(k: ConsumerKubeconfig): string {
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name: "default",
        cluster: {
          server: k.server,
          ...(k.caPem ? { "certificate-authority-data": Buffer.from(k.caPem).toString("base64") } : {}),
        },
      },
    ],
    users: [{ name: "default", user: { token: k.token } }],
    contexts: [{ name: "default", context: { cluster: "default", user: "default", namespace: k.namespace } }],
    "current-context": "default",
  });
}
