import { strict as assert } from "node:assert";
import {
  REVOKED_ROLES_ANNOTATION,
  REVOKE_SCRIPT,
  ROLE_NAME_PATTERN,
  knownRoles,
  liveRoles,
  planRevocation,
  roleName,
} from "./binding-roles.js";
import type { ObservedResource } from "./step.js";

const CLAIM = { name: "pg", namespace: "team-a" };
const [A, B, C] = ["uid-a", "uid-b", "uid-c"].map(roleName) as [string, string, string];

const binding = (uid: string, instanceRef = "pg", deleting = false) => ({
  apiVersion: "anynines.com/v1",
  kind: "XServiceBinding",
  metadata: { name: `b-${uid}`, uid, ...(deleting ? { deletionTimestamp: "2026-11-27T09:00:00Z" } : {}) },
  spec: { instanceRef, serviceInstanceType: "postgresql" },
});

/** A revocation Object as provider-kubernetes reports it, for the roles its pod drops. */
const revocation = (roles: string[], ready: boolean): ObservedResource => ({
  resource: {
    apiVersion: "kubernetes.crossplane.io/v1alpha2",
    kind: "Object",
    spec: {
      forProvider: {
        manifest: { kind: "Pod", metadata: { annotations: { [REVOKED_ROLES_ANNOTATION]: roles.join(" ") } } },
      },
    },
    status: { conditions: [{ type: "Ready", status: ready ? "True" : "False" }] },
  },
  connectionDetails: {},
});

describe("composition function: binding roles", () => {
  it("names a role by its composite's uid: stable, distinct, a plain identifier", () => {
    assert.equal(roleName("uid-a"), A);
    assert.match(A, ROLE_NAME_PATTERN);
    assert.notEqual(A, B);
  });

  it("counts as live the bindings that name this instance and are not being deleted", () => {
    assert.deepEqual(
      liveRoles(
        [binding("uid-b"), binding("uid-a"), binding("uid-c", "other"), binding("uid-x", "pg", true)],
        "pg",
      ),
      [A, B].sort(),
    );
    assert.deepEqual(liveRoles([{ kind: "XServiceBinding", spec: { instanceRef: "pg" } }], "pg"), []);
  });

  it("reads the ledger from status.managed.bindingRoles, ignoring what is not a binding role", () => {
    assert.deepEqual(
      knownRoles({ status: { managed: { bindingRoles: [B, "postgres", A, 7] } } }),
      [A, B].sort(),
    );
    assert.deepEqual(knownRoles({}), []);
  });

  it("new bindings join the ledger; nothing to revoke", () => {
    assert.deepEqual(planRevocation(CLAIM, [A], [A, B], {}), { known: [A, B].sort(), revoke: [] });
  });

  it("a known binding that is gone: a pod drops its role, which stays in the ledger until the pod succeeds", () => {
    const plan = planRevocation(CLAIM, [A, B], [B], {});
    assert.deepEqual(plan.revoke, [A]);
    assert.deepEqual(plan.known, [A, B].sort());
    assert.match(plan.resourceName!, /^revoke-[0-9a-f]{10}$/);
    assert.match(plan.podName!, /^pg-revoke-[0-9a-f]{10}$/);

    // The same roles give the same names, so a pod in progress is composed again unchanged.
    assert.deepEqual(
      planRevocation(CLAIM, [A, B], [B], { [plan.resourceName!]: revocation([A], false) }),
      plan,
    );

    // Once it succeeded the role is forgotten, and the pod is no longer composed (so it goes).
    assert.deepEqual(planRevocation(CLAIM, [A, B], [B], { [plan.resourceName!]: revocation([A], true) }), {
      known: [B],
      revoke: [],
    });
  });

  it("a role that was never known is never dropped, whatever the listing says", () => {
    // C's binding appeared and went between two reconciles: unseen, so not dropped (see the file's comment).
    assert.deepEqual(planRevocation(CLAIM, [A], [A], {}).revoke, []);
    // A new binding (C) whose role exists before the instance lists it is live, not gone.
    assert.deepEqual(planRevocation(CLAIM, [A], [A, C], {}).revoke, []);
  });

  it("more bindings gone while a pod runs: one pod for all that are not yet dropped", () => {
    const first = planRevocation(CLAIM, [A, B, C], [C], { "revoke-old": revocation([A], true) });
    assert.deepEqual(first.revoke, [B]);
    assert.deepEqual(first.known, [B, C].sort());
    const both = planRevocation(CLAIM, [A, B, C], [], { "revoke-old": revocation([A], false) });
    assert.deepEqual(both.revoke, [A, B, C].sort());
  });

  it("without the listing, changes nothing: the ledger and the pod composed last stay", () => {
    const plan = planRevocation(CLAIM, [A, B], [B], {});
    assert.deepEqual(planRevocation(CLAIM, [A, B], undefined, {}), { known: [A, B].sort(), revoke: [] });
    assert.deepEqual(
      planRevocation(CLAIM, [A, B], undefined, { [plan.resourceName!]: revocation([A], false) }),
      plan,
    );
  });

  it("keeps a pod's name a DNS label under 64 characters for the longest claim names", () => {
    const plan = planRevocation({ name: `${"a".repeat(43)}-${"b".repeat(16)}`, namespace: "n" }, [A], [], {});
    assert.ok(plan.podName!.length <= 63, plan.podName);
    assert.match(plan.podName!, /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
  });

  it("the revocation script checks every role against the binding role pattern before it drops anything", () => {
    assert.ok(REVOKE_SCRIPT.includes(`IF r !~ '${ROLE_NAME_PATTERN.source}' THEN`));
    // Roles reach psql as a variable from the environment, never spliced into the SQL.
    assert.ok(!/\$ROLES[^"]/.test(REVOKE_SCRIPT.split("<<'SQL'")[1]!));
  });
});
