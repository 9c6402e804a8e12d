import type { ExportedApiConfig } from "../config/schema";
import type { PolicyRule } from "../kube/policy-rule";
import {
  CONTRACT,
  contractAt,
  binderNamespaceRules,
  binderRules,
  boundResources,
  type ConsumerScope,
  type ContractRow,
  type Grant,
  type Verb,
} from "./contract";

/**
 * RBAC derived from the contract table (contract.ts): each rule of ours exists because some
 * row calls it. Pure; the components create these rules and the e2e removes each one in turn
 * to show a real request then fails.
 */

export type { PolicyRule } from "../kube/policy-rule";

/** One call of a row made concrete for a binding: placeholders resolved. */
export interface ConcreteCall {
  row: ContractRow;
  group: string;
  /** resource, or resource/subresource. */
  resource: string;
  name?: string;
  verbs: Verb[];
}

export interface Expansion {
  /** The APIs the binding binds (konnector rows), or all exported APIs (backend rows). */
  apis: ExportedApiConfig[];
  /** The cluster binding's namespace, for rows named "<cns>"; omitted when deriving ClusterRoles. */
  clusterNamespace?: string;
}

/** The bound CRD name of an API: `<plural>.<group>`. */
export const crdName = (r: { group: string; resource: string }) =>
  r.group ? `${r.resource}.${r.group}` : r.resource;

/** The concrete calls of rows, one per target resource. */
export function concreteCalls(rows: readonly ContractRow[], x: Expansion): ConcreteCall[] {
  const { bound, claims } = boundResources(x.apis);
  return rows.flatMap((row) => {
    const targets = row.target === "bound" ? bound : row.target === "claim" ? claims : [row.target];
    const sub = row.subresource ? `/${row.subresource}` : "";
    if (row.name === "<bound-crd>") {
      return bound.map((b) => ({
        row,
        group: "apiextensions.k8s.io",
        resource: "customresourcedefinitions",
        name: crdName(b),
        verbs: row.verbs,
      }));
    }
    const name = row.name === "<cns>" ? (x.clusterNamespace ?? "<cns>") : row.name;
    return targets.map((t) => ({
      row,
      group: t.group,
      resource: `${t.resource}${sub}`,
      verbs: row.verbs,
      ...(name ? { name } : {}),
    }));
  });
}

/**
 * Rules from calls: verbs merged per (group, resource, name), then resources with the same
 * group, verbs and names merged into one rule. `create` is never limited by name (RBAC
 * cannot: the name is not part of a create request's attributes), nor are list and watch.
 */
export function rulesFromCalls(calls: ConcreteCall[]): PolicyRule[] {
  const perResource = new Map<
    string,
    { group: string; resource: string; name?: string; verbs: Set<string> }
  >();
  const add = (group: string, resource: string, name: string | undefined, verb: string) => {
    const key = `${group}|${resource}|${name ?? ""}`;
    const entry = perResource.get(key) ?? {
      group,
      resource,
      ...(name ? { name } : {}),
      verbs: new Set<string>(),
    };
    entry.verbs.add(verb);
    perResource.set(key, entry);
  };
  for (const c of calls) {
    for (const verb of c.verbs) {
      const nameable = c.name !== undefined && !["create", "list", "watch"].includes(verb);
      add(c.group, c.resource, nameable ? c.name : undefined, verb);
    }
  }
  const merged = new Map<string, PolicyRule>();
  for (const e of perResource.values()) {
    const verbs = [...e.verbs].sort();
    const key = `${e.group}|${verbs.join(",")}|${e.name ?? ""}`;
    const rule = merged.get(key);
    if (rule) rule.resources = [...new Set([...rule.resources, e.resource])].sort();
    else
      merged.set(key, {
        apiGroups: [e.group],
        resources: [e.resource],
        verbs,
        ...(e.name ? { resourceNames: [e.name] } : {}),
      });
  }
  // Names of one rule are merged too, when group, resources and verbs agree.
  const byNames = new Map<string, PolicyRule>();
  for (const r of merged.values()) {
    if (!r.resourceNames) {
      byNames.set(`${r.apiGroups[0]}|${r.resources.join(",")}|${r.verbs.join(",")}|*`, r);
      continue;
    }
    const key = `${r.apiGroups[0]}|${r.resources.join(",")}|${r.verbs.join(",")}`;
    const prior = byNames.get(key);
    if (prior?.resourceNames)
      prior.resourceNames = [...new Set([...prior.resourceNames, ...r.resourceNames])].sort();
    else byNames.set(key, r);
  }
  return [...byNames.values()].sort((a, b) => ruleKey(a).localeCompare(ruleKey(b)));
}

const ruleKey = (r: PolicyRule) =>
  `${r.apiGroups.join(",")}|${r.resources.join(",")}|${(r.resourceNames ?? []).join(",")}|${r.verbs.join(",")}`;

/**
 * The rows one RBAC object grants at a consumer scope. Namespaced is the scope this project
 * runs (Cluster is refused by validation, see clusterWideGrants).
 */
export const rowsGrantedBy = (grant: Grant, scope: ConsumerScope = "Namespaced") =>
  contractAt(scope).filter((r) => r.grantedBy === grant);

/** ClusterRole klutch-bind-konnector on an app cluster: the konnector's cluster-wide calls for its bound APIs. */
export function konnectorClusterRoleRules(apis: ExportedApiConfig[]): PolicyRule[] {
  return rulesFromCalls(concreteCalls(rowsGrantedBy("konnector-cluster-role"), { apis }));
}

/**
 * Role klutch-bind-konnector in klutch-bind: its lease and its kubeconfig Secret, less what
 * the ClusterRole already allows (a bound API that claims Secrets already lets the konnector
 * write every Secret, its own included), so no rule is there for nothing.
 */
export function konnectorRoleRules(apis: ExportedApiConfig[]): PolicyRule[] {
  const cluster = konnectorClusterRoleRules(apis);
  const calls = concreteCalls(rowsGrantedBy("konnector-role"), { apis })
    .map((c) => ({
      ...c,
      verbs: c.verbs.filter(
        (verb) => !allows(cluster, { group: c.group, resource: c.resource, verb, name: c.name }),
      ),
    }))
    .filter((c) => c.verbs.length > 0);
  return rulesFromCalls(calls);
}

/**
 * The backend's ClusterRole: its own calls, plus every rule it writes into roles it makes
 * (klutch-binder, and klutch-binder-<cns> over all exported APIs and claims). The API server
 * refuses to let anyone write or bind a role granting more than they hold, so holding these
 * replaces upstream's cluster-admin binding without `escalate` or `bind`.
 */
export function backendClusterRoleRules(
  exportedApis: ExportedApiConfig[],
  scope: ConsumerScope = "Namespaced",
): PolicyRule[] {
  const own = concreteCalls(rowsGrantedBy("backend-cluster-role", scope), { apis: exportedApis });
  const granted: ConcreteCall[] = [...binderRules(), ...binderNamespaceRules(exportedApis)].flatMap((rule) =>
    rule.resources.map((resource) => ({
      row: CONTRACT[0]!,
      group: rule.apiGroups[0] ?? "",
      resource,
      verbs: rule.verbs as Verb[],
    })),
  );
  return rulesFromCalls([...own, ...granted]);
}

/** A request's attributes, as the RBAC authorizer sees them. */
export interface RequestAttributes {
  group: string;
  resource: string;
  verb: string;
  name?: string;
}

/** Whether rules allow a request (RBAC semantics, no wildcards needed: we never write them). */
export function allows(rules: PolicyRule[], req: RequestAttributes): boolean {
  return rules.some(
    (r) =>
      (r.apiGroups.includes(req.group) || r.apiGroups.includes("*")) &&
      (r.resources.includes(req.resource) || r.resources.includes("*")) &&
      (r.verbs.includes(req.verb) || r.verbs.includes("*")) &&
      (!r.resourceNames ||
        r.resourceNames.length === 0 ||
        (req.name !== undefined && r.resourceNames.includes(req.name))),
  );
}

/** A rule that grants everything somewhere, which no role of ours may contain. */
export function hasWildcard(rule: PolicyRule): boolean {
  return [...rule.apiGroups, ...rule.resources, ...rule.verbs].includes("*");
}
