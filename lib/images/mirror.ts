/**
 * Image and package references moved to an operator's registry mirror. Pure.
 *
 * The reference grammar is distribution/reference's (`reference.go`, `normalize.go`): the first
 * path component is a registry host when it holds a `.` or a `:` or is `localhost`; otherwise
 * the reference is Docker Hub's (`docker.io`), and a one-component name is in its `library/`.
 * A mirror keeps each repository's path below its own registry, as Helm charts'
 * `global.imageRegistry` and Crossplane's ImageConfig `rewriteImage.prefix` (which replaces the
 * matched prefix of a package's path) both do: `ghcr.io/dexidp/dex:v2.41.1` from the mirror
 * `mirror.example.com` is `mirror.example.com/dexidp/dex:v2.41.1`.
 */

/** A registry host (with an optional port) and an optional path below it, as `klutch:imageRegistry` takes it. */
export const MIRROR_PATTERN =
  /^(localhost|[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+)(:[0-9]{1,5})?(\/[a-z0-9]+([._-][a-z0-9]+)*)*$/;

/** The registry a reference names, and the rest of it (repository path, tag or digest). */
export function splitRegistry(ref: string): { registry: string; rest: string } {
  const slash = ref.indexOf("/");
  const first = slash < 0 ? "" : ref.slice(0, slash);
  if (first && (first.includes(".") || first.includes(":") || first === "localhost")) {
    return { registry: first, rest: ref.slice(slash + 1) };
  }
  return { registry: "docker.io", rest: slash < 0 ? `library/${ref}` : ref };
}

/** `ref` from `mirror` instead of its own registry. */
export function mirroredImage(ref: string, mirror: string): string {
  return `${mirror.replace(/\/+$/, "")}/${splitRegistry(ref).rest}`;
}

/** A reference's repository (registry included) and tag; undefined for a digest or no tag. */
export function repositoryAndTag(ref: string): { repository: string; tag: string } | undefined {
  if (ref.includes("@")) return undefined;
  const colon = ref.lastIndexOf(":");
  if (colon < 0 || ref.indexOf("/", colon) >= 0) return undefined;
  return { repository: ref.slice(0, colon), tag: ref.slice(colon + 1) };
}
