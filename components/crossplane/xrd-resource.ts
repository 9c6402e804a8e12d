import * as k8s from "@pulumi/kubernetes";
import type * as pulumi from "@pulumi/pulumi";

/**
 * An XRD as a Pulumi resource, deleted the way Crossplane can finish.
 *
 * @pulumi/kubernetes deletes with foreground propagation unless the object says otherwise
 * (v4.25.0 provider/pkg/metadata/overrides.go DeletionPropagation). For an XRD that makes
 * Kubernetes' garbage collector delete what the XRD owns at once: the XR and claim CRDs and the
 * RBAC manager's `crossplane:composite:<xrd>:aggregate-to-crossplane` role (crossplane v1.20.11
 * internal/controller/rbac/definition/roles.go), while Crossplane still has XRs and claims to
 * finalise with those very rights. Background propagation lets Crossplane's own ordered
 * teardown (offered/definition reconcilers: claims, then XRs, then the CRDs) run first.
 *
 * The teardown drain (providers/dynamic/teardown-drain.ts) empties the XRD before this delete
 * runs; the bounded timeout turns a regression into a prompt error instead of 10 minutes.
 * Both settings act from the state, so they hold from the `up` after they were introduced.
 */
export function xrdResource(
  name: string,
  xrd: Record<string, unknown>,
  opts: pulumi.CustomResourceOptions,
): k8s.apiextensions.CustomResource {
  return new k8s.apiextensions.CustomResource(
    name,
    withBackgroundDeletion(xrd) as unknown as k8s.apiextensions.CustomResourceArgs,
    { ...opts, customTimeouts: { ...opts.customTimeouts, delete: XRD_DELETE_TIMEOUT } },
  );
}

/**
 * The XRD as xrdResource applies it. A package ships the same object, so a loose XRD adopted by
 * a package (components/crossplane/api-objects.ts) is replaced by an identical one.
 */
export function withBackgroundDeletion(xrd: Record<string, unknown>): Record<string, unknown> {
  const metadata = (xrd.metadata ?? {}) as { annotations?: Record<string, string> };
  return {
    ...xrd,
    metadata: {
      ...metadata,
      annotations: { ...metadata.annotations, [DELETION_POLICY_ANNOTATION]: "background" },
    },
  };
}

export const DELETION_POLICY_ANNOTATION = "pulumi.com/deletionPropagationPolicy";
export const XRD_DELETE_TIMEOUT = "5m";
