/**
 * The login roles a local PostgreSQL server holds for its bindings, and how a binding's role is
 * revoked once the binding is gone. a8s drops a binding's user when its ServiceBinding is
 * deleted, from the binding controller's finalizer; Crossplane 1.20 runs no function when a
 * composite is deleted, and provider-kubernetes only deletes what it applied. So the instance
 * keeps the ledger instead: on each reconcile it lists the XServiceBindings of its claim's
 * namespace (an extra resource) and composes a pod (local-postgresql.ts adminScriptPod) that
 * drops the roles of the bindings it knew and that are gone or being deleted.
 *
 * Only roles the instance has seen are dropped, and a role name is a composite's uid hashed,
 * never reused, so a live binding's role is never dropped, however a listing and a pod
 * interleave with a new binding's role pod. What this leaves: a binding created and deleted
 * between two reconciles of its instance (Crossplane's poll interval, 30 s on the local stack)
 * is never seen, and its role stays until the instance goes.
 *
 * Pure: the hash is the only computation.
 */
import { createHash } from "node:crypto";
import { isJsonObject, type JsonObject } from "./json.js";
import {
  CLAIM_NAMESPACE_LABEL,
  isReadyTrue,
  stringAt,
  type Claim,
  type ExtraResourceSelector,
  type ObservedResource,
} from "./step.js";

/** The key the bindings are asked for, and delivered under, in the instance's extra resources. */
export const BINDINGS_REQUIREMENT = "bindings";
export const BINDING_API_VERSION = "anynines.com/v1";
export const BINDING_KIND = "XServiceBinding";

/** Composed resources revoking roles are named with this prefix and the pod's hash. */
export const REVOKE_RESOURCE_PREFIX = "revoke-";
/** The pod's annotation listing the roles it drops, read back from the observed Object. */
export const REVOKED_ROLES_ANNOTATION = "klutch.anynines.com/revoked-roles";

/** A binding role's name: `klutch_` and 12 hex digits. Anything else is never dropped. */
export const ROLE_NAME_PATTERN = /^klutch_[0-9a-f]{12}$/;

/**
 * The binding's login role: its composite's uid hashed, so it is the binding's own for its life,
 * never another binding's, and a valid unquoted identifier (PostgreSQL folds to lower case).
 */
export function roleName(uid: string): string {
  return `klutch_${createHash("sha256").update(uid).digest("hex").slice(0, 12)}`;
}

/** Every XServiceBinding of the claim's namespace; which of them bind this instance is read from their spec. */
export function bindingsSelector(claim: Claim): ExtraResourceSelector {
  return {
    apiVersion: BINDING_API_VERSION,
    kind: BINDING_KIND,
    matchLabels: { [CLAIM_NAMESPACE_LABEL]: claim.namespace },
  };
}

/** The roles of the bindings that name `instanceClaim` and are not being deleted. */
export function liveRoles(bindings: readonly JsonObject[], instanceClaim: string): string[] {
  const roles = bindings.flatMap((b) => {
    const meta = isJsonObject(b.metadata) ? b.metadata : {};
    if (stringAt(b, "spec", "instanceRef") !== instanceClaim) return [];
    if (typeof meta.deletionTimestamp === "string" || typeof meta.uid !== "string" || meta.uid === "")
      return [];
    return [roleName(meta.uid)];
  });
  return [...new Set(roles)].sort();
}

/** The roles the instance knew of at its last reconcile, from its status.managed.bindingRoles. */
export function knownRoles(composite: JsonObject): string[] {
  const status = isJsonObject(composite.status) ? composite.status : {};
  const managed = isJsonObject(status.managed) ? status.managed : {};
  const roles = Array.isArray(managed.bindingRoles) ? (managed.bindingRoles as unknown[]) : [];
  return roles.filter((r): r is string => typeof r === "string" && ROLE_NAME_PATTERN.test(r)).sort();
}

export interface RevocationPlan {
  /** What status.managed.bindingRoles says from now: the live roles and those still to drop. */
  known: string[];
  /** The roles to drop, sorted; none: no pod is composed, and a finished one is removed. */
  revoke: string[];
  /** The composed resource's name for the pod dropping `revoke`, if any. */
  resourceName?: string;
  /** The revocation pod's name in the claim's namespace. */
  podName?: string;
}

/** 10 hex digits naming a revocation: the instance's claim and the roles it drops. */
function revocationHash(claim: Claim, roles: readonly string[]): string {
  return createHash("sha256")
    .update(`${claim.namespace}/${claim.name}\0${roles.join(" ")}`)
    .digest("hex")
    .slice(0, 10);
}

/**
 * What the instance does about its bindings' roles, given the roles it knew, the roles of its
 * live bindings (undefined: the listing has not been delivered yet, so nothing changes) and
 * its observed composed resources: roles a finished revocation pod dropped are forgotten.
 */
export function planRevocation(
  claim: Claim,
  known: readonly string[],
  live: readonly string[] | undefined,
  observed: Readonly<Record<string, ObservedResource>>,
): RevocationPlan {
  const revocations = Object.entries(observed)
    .filter(([name]) => name.startsWith(REVOKE_RESOURCE_PREFIX))
    .map(([, o]) => ({ roles: revokedBy(o.resource), done: isReadyTrue(o.resource) }));
  if (live === undefined) {
    // Without the listing a gone role cannot be told from a live one: the ledger stays, and so
    // does the revocation composed last time (the same roles give the same names).
    const composed = revocations.flatMap((r) => r.roles);
    return withPod(claim, { known: [...known].sort(), revoke: [...new Set(composed)].sort() });
  }
  const dropped = new Set(revocations.filter((r) => r.done).flatMap((r) => r.roles));
  const liveSet = new Set(live);
  const revoke = known.filter((r) => !liveSet.has(r) && !dropped.has(r));
  return withPod(claim, { known: [...new Set([...live, ...revoke])].sort(), revoke: revoke.sort() });
}

function withPod(claim: Claim, plan: RevocationPlan): RevocationPlan {
  if (plan.revoke.length === 0) return plan;
  const hash = revocationHash(claim, plan.revoke);
  // Short enough for a DNS label (63), like every name a pod may lend a label value; the hash
  // keeps it unique when the claim's name is cut.
  const podName = `${claim.name.slice(0, 44).replace(/-+$/, "")}-revoke-${hash}`;
  return { ...plan, resourceName: `${REVOKE_RESOURCE_PREFIX}${hash}`, podName };
}

/** The roles an observed revocation Object's pod drops, from its annotation. */
function revokedBy(object: JsonObject): string[] {
  const value = stringAt(
    object,
    "spec",
    "forProvider",
    "manifest",
    "metadata",
    "annotations",
    REVOKED_ROLES_ANNOTATION,
  );
  return (value ?? "").split(" ").filter((r) => ROLE_NAME_PATTERN.test(r));
}

/**
 * The script of the revocation pod. Every role in $ROLES (space-separated) is first checked
 * against the binding role pattern in SQL, and any other name fails the run before anything is
 * done, so it can drop nothing else. Then for each role: no more logins,
 * its sessions ended, what it owns handed to the superuser, its privileges revoked (DROP OWNED
 * covers the current database and shared objects such as the database grant), then the role
 * dropped. A role already gone is skipped, so a pod run again ends in the same state. The
 * block is quoted with a tag, not with $$, which the kubelet would turn into $ in a command.
 */
export const REVOKE_SCRIPT = `set -eu
psql --no-psqlrc -v ON_ERROR_STOP=1 -v roles="$ROLES" <<'SQL'
SELECT set_config('klutch.revoke_roles', :'roles', false);
DO $revoke$
DECLARE
  roles text[] := string_to_array(current_setting('klutch.revoke_roles'), ' ');
  r text;
BEGIN
  FOREACH r IN ARRAY roles LOOP
    IF r !~ '${ROLE_NAME_PATTERN.source}' THEN
      RAISE EXCEPTION 'refusing to drop %: not a binding role', r;
    END IF;
  END LOOP;
  FOREACH r IN ARRAY roles LOOP
    IF EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = r) THEN
      EXECUTE format('ALTER ROLE %I NOLOGIN', r);
      PERFORM pg_terminate_backend(pid) FROM pg_catalog.pg_stat_activity WHERE usename = r;
      EXECUTE format('REASSIGN OWNED BY %I TO CURRENT_USER', r);
      EXECUTE format('DROP OWNED BY %I', r);
      EXECUTE format('DROP ROLE %I', r);
      RAISE NOTICE 'dropped role %', r;
    END IF;
  END LOOP;
END
$revoke$;
SQL
`;
