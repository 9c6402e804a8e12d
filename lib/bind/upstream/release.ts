/**
 * The klutch-bind releases this project knows, and what each one means for what we deploy.
 *
 * Facts from anynines/klutchio (`bind/`), read at the tags named here:
 * - v1.4.0 (2025-12-29) and v1.5.0 (2026-05-26) ship the same konnector and backend code; the
 *   only API change is `APIServiceExportTemplate.spec.APIServiceSelector.version` becoming
 *   optional, and controller-gen v0.19 regenerated the CRDs at v1.5.0 (see crds/releases.ts).
 * - Images are pushed by hand (`bind/RELEASE.MD`: ko to public.ecr.aws/w5n9a2g2/klutch/…).
 *   No file at v1.5.0, nor on `main` after it (commit e6895b7 "Update image references"),
 *   references a v1.5.0 konnector or backend image: the konnector's manifest has an `IMAGE`
 *   placeholder, the example-backend manifests name ghcr.io/kube-bind/example-backend:latest,
 *   the release template takes `$KUBE_BIND_BACKEND_VERSION`, and the konnector's default tag
 *   is v1.4.0 (`bind/pkg/konnector/constants.go@main`). What v1.5.0 does version is the
 *   Crossplane side: `crossplane-api/deploy/*.yaml` name the dataservices Configuration and
 *   provider-anynines at v1.5.0. v1.4.0 is therefore the newest release with published bind
 *   images, and the default here.
 * - `APIServiceBinding` is cluster-scoped in both; it became namespaced on `main`, untagged.
 *   The root kustomization of v1.5.0 pulls CRDs from `main`, so installing "v1.5.0" that way
 *   gets a CRD a v1.4.0/v1.5.0 konnector would try to change back (scope is immutable) and exit.
 */

export const BIND_RELEASES = ["v1.4.0", "v1.5.0"] as const;
export type BindRelease = (typeof BIND_RELEASES)[number];
export const DEFAULT_BIND_RELEASE: BindRelease = "v1.4.0";

const REGISTRY = "public.ecr.aws/w5n9a2g2/klutch";

export interface ReleaseImages {
  backend: string;
  konnector: string;
}

/** The images of a release, as `bind/RELEASE.MD` publishes them. */
export function releaseImages(release: BindRelease): ReleaseImages {
  return {
    backend: `${REGISTRY}/example-backend:${release}`,
    konnector: `${REGISTRY}/konnector:${release}`,
  };
}
