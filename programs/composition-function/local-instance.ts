/**
 * The local PostgreSQL instance a claim names (spec.instanceRef: a PostgresqlInstance claim of the
 * claim's namespace), found among the extra resources Crossplane delivered: what a binding, a
 * backup and a restore of the local backend each need, its host and its superuser's Secret.
 *
 * The instance is an extra resource: Crossplane 1.20 fetches what the response's
 * requirements.extra_resources asks for and calls the function again with it (the SDK's
 * requireResource writes `requirements.resources`, which only Crossplane 2 reads).
 */
import type { JsonObject } from "./json.js";
import type { ManagedInstance } from "./local-postgresql.js";
import {
  CLAIM_NAMESPACE_LABEL,
  CLAIM_NAME_LABEL,
  describe,
  stringAt,
  type Claim,
  type ExtraResourceSelector,
} from "./step.js";

/** The key the instance is asked for, and delivered under, in the request's extra resources. */
export const INSTANCE_REQUIREMENT = "instance";
export const INSTANCE_API_VERSION = "anynines.com/v1";
export const INSTANCE_KIND = "XPostgresqlInstance";

/** The composite made for the claim `claimName` of `namespace`, of the given kind. */
export function claimSelector(
  apiVersion: string,
  kind: string,
  namespace: string,
  claimName: string,
): ExtraResourceSelector {
  return {
    apiVersion,
    kind,
    matchLabels: { [CLAIM_NAME_LABEL]: claimName, [CLAIM_NAMESPACE_LABEL]: namespace },
  };
}

/** The instance's composite: the one made for the claim spec.instanceRef names, in the claim's namespace. */
export function instanceSelector(claim: Claim, instanceRef: string): ExtraResourceSelector {
  return claimSelector(INSTANCE_API_VERSION, INSTANCE_KIND, claim.namespace, instanceRef);
}

export type Found<T> = { found: T } | { reason: string; message: string };

/**
 * The one composite among `delivered` (those made for the claim `claimName`), or why there is
 * none: not found, two or more (objects labelled by hand), or `notReady` when it lacks what the
 * caller reads from it.
 */
export function oneComposite(
  delivered: readonly JsonObject[],
  what: string,
  namespace: string,
  kind: string,
): Found<JsonObject> {
  const inNamespace = `in namespace ${JSON.stringify(namespace)}`;
  if (delivered.length === 0) return { reason: "NotFound", message: `${what} not found ${inNamespace}` };
  // One claim has one composite; two would be objects labelled by hand, and either could be the wrong one.
  if (delivered.length > 1)
    return {
      reason: "Ambiguous",
      message:
        `${what} ${inNamespace} matches ${delivered.length} ${kind}s (${delivered.map(describe).join(", ")}); ` +
        `only the one Crossplane made for the claim may carry its ${CLAIM_NAME_LABEL} and ${CLAIM_NAMESPACE_LABEL} labels`,
    };
  return { found: delivered[0]! };
}

/**
 * Where the instance serves and its superuser's Secret, from its status.managed; reasons are
 * `Instance` + NotFound, Ambiguous or NotReady, and the message says what the caller waits for.
 */
export function localInstance(
  instances: readonly JsonObject[],
  claim: Claim,
  instanceRef: string,
  waiting: string,
): Found<Pick<ManagedInstance, "host" | "adminSecret">> {
  const where = `PostgresqlInstance ${JSON.stringify(instanceRef)}`;
  const one = oneComposite(instances, where, claim.namespace, INSTANCE_KIND);
  if (!("found" in one)) return { reason: `Instance${one.reason}`, message: one.message };
  const host = stringAt(one.found, "status", "managed", "host");
  const adminSecret = stringAt(one.found, "status", "managed", "adminSecret");
  if (!host || !adminSecret)
    return {
      reason: "InstanceNotReady",
      message: `${where} in namespace ${JSON.stringify(claim.namespace)} has no status.managed.${host ? "adminSecret" : "host"} yet; ${waiting}`,
    };
  return { found: { host, adminSecret } };
}
