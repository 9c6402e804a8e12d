import { createHash } from "node:crypto";
import { stringify } from "yaml";

/**
 * Crossplane Configuration packages, rendered here: the package stream (`package.yaml`) and the
 * OCI documents that carry it. Pure: the caller packs the layer and talks to the registry
 * (providers/dynamic/package-push.ts).
 *
 * What Crossplane's package manager reads, from its source (crossplane v1.20.9):
 * - internal/controller/pkg/revision/imageback.go: the manifest's one layer annotated
 *   `io.crossplane.xpkg: base` (more than one is an error), uncompressed, and in it the tar entry
 *   named exactly `package.yaml`;
 * - internal/xpkg/lint.go NewConfigurationLinter: exactly one meta object, a
 *   `meta.pkg.crossplane.io` Configuration whose version constraint is valid semver, and besides
 *   it only CompositeResourceDefinitions and Compositions;
 * - apis/pkg/meta/v1/meta.go: `spec.crossplane.version` and `spec.dependsOn[]` (`function` and
 *   `version`, a Masterminds semver constraint checked against the installed package's tag,
 *   internal/controller/pkg/revision/dependency.go).
 */

export const XPKG_LAYER_ANNOTATION = "io.crossplane.xpkg";
export const XPKG_BASE_LAYER = "base";
export const PACKAGE_STREAM_FILE = "package.yaml";

export const MEDIA_TYPES = {
  manifest: "application/vnd.oci.image.manifest.v1+json",
  config: "application/vnd.oci.image.config.v1+json",
  gzipLayer: "application/vnd.oci.image.layer.v1.tar+gzip",
} as const;

/** The object kinds a Configuration may carry (the linter above). */
const ALLOWED = new Set([
  "apiextensions.crossplane.io/v1/CompositeResourceDefinition",
  "apiextensions.crossplane.io/v1/Composition",
]);

export interface PackageDependency {
  /** The Function's package source, without tag: as its `spec.package` minus `:<tag>`. */
  function: string;
  /** A semver constraint; `>=v0.0.0-0` admits the project's pre-release tags. */
  version: string;
}

/**
 * How an environment ships its APIs as Configuration packages (components/crossplane/
 * configuration-package.ts): the registry they are pushed to and pulled from, and the Functions
 * each package depends on.
 */
export interface ApiPackaging {
  /**
   * `address` is `host:port` as the package manager reaches it, `pushAddress` as this machine
   * does (the same unless given); `caBundle` the PEM of the registry's CA.
   */
  registry: { address: string; pushAddress?: string; caBundle: string };
  dependsOn: PackageDependency[];
  /**
   * Whether the loose declarations of the release before stay, retained on delete, for the
   * package to adopt (`retained`), or are gone (`none`): components/crossplane/api-objects.ts.
   */
  looseDeclarations: "retained" | "none";
}

export interface ConfigurationPackageSpec {
  name: string;
  description: string;
  /** Crossplane versions the package admits, e.g. `>=v1.17.0-0`. */
  crossplaneVersion: string;
  dependsOn: PackageDependency[];
  objects: Record<string, unknown>[];
}

interface ObjectLike {
  apiVersion?: unknown;
  kind?: unknown;
  metadata?: { name?: unknown };
}

/**
 * The package stream: the meta object first, then each object, as `crossplane xpkg build`
 * writes it (YAML documents separated by `---`). Throws, naming the object, on a kind a
 * Configuration may not carry or an object without a name, so a bad package is never pushed.
 */
export function configurationPackageYaml(spec: ConfigurationPackageSpec): string {
  const names = new Set<string>();
  for (const [i, o] of (spec.objects as ObjectLike[]).entries()) {
    const gvk = `${String(o.apiVersion)}/${String(o.kind)}`;
    const name = o.metadata?.name;
    if (!ALLOWED.has(gvk))
      throw new Error(
        `configuration package ${spec.name}: objects[${i}] is a ${gvk}; a Configuration carries only ${[...ALLOWED].join(" and ")}`,
      );
    if (typeof name !== "string" || name === "")
      throw new Error(`configuration package ${spec.name}: objects[${i}] (${gvk}) has no metadata.name`);
    if (names.has(`${gvk}/${name}`))
      throw new Error(`configuration package ${spec.name}: ${gvk} ${name} is in it twice`);
    names.add(`${gvk}/${name}`);
  }
  const meta = {
    apiVersion: "meta.pkg.crossplane.io/v1",
    kind: "Configuration",
    metadata: {
      name: spec.name,
      annotations: {
        "meta.crossplane.io/maintainer": "Klutch on Pulumi",
        "meta.crossplane.io/description": spec.description,
      },
    },
    spec: {
      crossplane: { version: spec.crossplaneVersion },
      ...(spec.dependsOn.length > 0
        ? { dependsOn: spec.dependsOn.map((d) => ({ function: d.function, version: d.version })) }
        : {}),
    },
  };
  // YAML 1.1, the dialect Crossplane's parser reads (sigs.k8s.io/yaml over go-yaml v2): written as
  // 1.2, a string such as "on" or "off" (PostgreSQL's enums) is left bare and read back as a boolean.
  return [meta, ...spec.objects]
    .map((d) => `---\n${stringify(d, { version: "1.1", lineWidth: 0 })}`)
    .join("");
}

const sha256 = (data: string | Buffer): string => `sha256:${createHash("sha256").update(data).digest("hex")}`;

/**
 * The tag a package stream is pushed under: the project's version with the stream's content as a
 * pre-release part (`v0.1.0-g0123456789ab`), so the same stream always has the same tag, a new
 * one a new tag (and Crossplane a new revision), and `>=v0.0.0-0` admits it.
 */
export function packageTag(version: string, packageYaml: string): string {
  return `v${version.replace(/^v/, "")}-g${sha256(packageYaml).slice(7, 19)}`;
}

/** The `:<tag>` or `@<digest>` of a package reference taken off: its source, as Crossplane's lock names it. */
export function packageSource(reference: string): string {
  const at = reference.indexOf("@");
  if (at >= 0) return reference.slice(0, at);
  const colon = reference.lastIndexOf(":");
  return colon > reference.lastIndexOf("/") ? reference.slice(0, colon) : reference;
}

export interface PackageLayer {
  /** The gzip blob's digest and size. */
  digest: string;
  size: number;
  /** The digest of the tar inside (the config's rootfs). */
  diffId: string;
}

/**
 * The image config and manifest for a package layer. Fixed metadata (no time, no host), so the
 * same stream gives the same manifest digest.
 */
export function packageImageDocuments(layer: PackageLayer): {
  config: string;
  configDigest: string;
  manifest: string;
  manifestDigest: string;
} {
  const config = JSON.stringify({
    architecture: "amd64",
    os: "linux",
    config: { Labels: { [`${XPKG_LAYER_ANNOTATION}:${layer.digest}`]: XPKG_BASE_LAYER } },
    rootfs: { type: "layers", diff_ids: [layer.diffId] },
  });
  const configDigest = sha256(config);
  const manifest = JSON.stringify({
    schemaVersion: 2,
    mediaType: MEDIA_TYPES.manifest,
    config: { mediaType: MEDIA_TYPES.config, digest: configDigest, size: Buffer.byteLength(config) },
    layers: [
      {
        mediaType: MEDIA_TYPES.gzipLayer,
        digest: layer.digest,
        size: layer.size,
        annotations: { [XPKG_LAYER_ANNOTATION]: XPKG_BASE_LAYER },
      },
    ],
  });
  return { config, configDigest, manifest, manifestDigest: sha256(manifest) };
}
