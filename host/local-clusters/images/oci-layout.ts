import { createHash, randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { pipeline } from "node:stream/promises";
import { Transform } from "node:stream";
import * as zlib from "node:zlib";
import { pack, type Headers } from "tar-stream";
import { archivesToPrune } from "../../../lib/local/image-cache";

/**
 * Writes container images as OCI image-layout tar archives (image-spec v1.1: `oci-layout`,
 * `index.json`, `blobs/sha256/…`) with one uncompressed layer, the form `ctr images import`
 * reads. No Docker, no registry: the layer is a tar of files this machine already has.
 */

/** One file system entry of a layer. Paths are absolute inside the image (`/usr/sbin/haproxy`). */
export type LayerEntry =
  | { type: "dir"; path: string; mode?: number }
  /** A file copied from the host (its content, not its mode: `mode` is given). */
  | { type: "file"; path: string; mode: number; source: string }
  | { type: "content"; path: string; mode: number; content: string | Buffer }
  | { type: "symlink"; path: string; target: string };

/** The parts of an OCI image config (`config` object) the images here set. */
export interface ImageRuntimeConfig {
  Entrypoint?: string[];
  Cmd?: string[];
  Env?: string[];
  User?: string;
  WorkingDir?: string;
  /** The signal the runtime stops the container with (default SIGTERM); CRI runtimes read it from here. */
  StopSignal?: string;
}

export interface ImageSpec {
  /** Repository, e.g. `klutch.local/haproxy`. */
  repository: string;
  /** What the image holds, before the content hash is appended to make the tag. */
  version: string;
  config: ImageRuntimeConfig;
  entries: LayerEntry[];
  /**
   * Also write Docker's `manifest.json` into the archive (as `docker save` does beside the OCI
   * layout since Docker 25): the form `crossplane xpkg build --embed-runtime-image-tarball`
   * reads (go-containerregistry's tarball.ImageFromPath).
   */
  dockerManifest?: boolean;
}

export interface BuiltImage {
  /** `repository:version-<12 hex of the manifest digest>`: the name pods use. */
  reference: string;
  manifestDigest: string;
  layerDigest: string;
  /** The OCI-layout tar to import. */
  archive: string;
  /** false when the archive was already in the cache. */
  built: boolean;
}

// Fixed metadata, so the same files always give the same layer digest (and cache key).
const EPOCH = new Date(0);
const MEDIA = {
  index: "application/vnd.oci.image.index.v1+json",
  manifest: "application/vnd.oci.image.manifest.v1+json",
  config: "application/vnd.oci.image.config.v1+json",
  layer: "application/vnd.oci.image.layer.v1.tar",
  zstdLayer: "application/vnd.oci.image.layer.v1.tar+zstd",
};

export const sha256 = (data: string | Buffer): string =>
  `sha256:${createHash("sha256").update(data).digest("hex")}`;

/** A tag may hold [A-Za-z0-9_.-] only, up to 128 characters. */
export function tagFor(version: string, manifestDigest: string): string {
  const clean = version.replace(/[^A-Za-z0-9_.-]/g, "_").replace(/^[.-]+/, "");
  return `${clean.slice(0, 100)}-${manifestDigest.replace(/^sha256:/, "").slice(0, 12)}`;
}

/**
 * The layer's entries in tar order: parents before children (every parent directory is added
 * when not listed), each path once, sorted, so the tar and its digest depend only on content.
 */
export function normalizeEntries(entries: LayerEntry[]): LayerEntry[] {
  const byPath = new Map<string, LayerEntry>();
  for (const entry of entries) {
    const p = path.posix.normalize(entry.path);
    if (!p.startsWith("/") || p === "/")
      throw new Error(`layer path must be absolute and not /: ${entry.path}`);
    const prior = byPath.get(p);
    // The same library reached from two programs is one entry; two different contents for one
    // path are a mistake.
    if (prior && JSON.stringify(prior) === JSON.stringify({ ...entry, path: p })) continue;
    if (prior && prior.type !== "dir") throw new Error(`layer path listed twice: ${p}`);
    byPath.set(p, { ...entry, path: p });
    for (let dir = path.posix.dirname(p); dir !== "/"; dir = path.posix.dirname(dir)) {
      if (!byPath.has(dir)) byPath.set(dir, { type: "dir", path: dir });
    }
  }
  return [...byPath.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function header(entry: LayerEntry): Headers {
  const common = { name: entry.path.slice(1), mtime: EPOCH, uid: 0, gid: 0, uname: "", gname: "" };
  switch (entry.type) {
    case "dir":
      // A trailing slash, as GNU tar writes directories.
      return { ...common, name: `${common.name}/`, type: "directory", mode: entry.mode ?? 0o755 };
    case "symlink":
      return { ...common, type: "symlink", linkname: entry.target, mode: 0o777 };
    case "file":
      return { ...common, type: "file", mode: entry.mode, size: fs.statSync(entry.source).size };
    case "content":
      return { ...common, type: "file", mode: entry.mode, size: Buffer.byteLength(entry.content) };
  }
}

/**
 * A pass-through that hashes and counts what it passes on: placed before a file, the digest and
 * size of what the file gets; before a compressor, of the uncompressed layer (its diff ID).
 */
class HashingStream extends Transform {
  private readonly hash = createHash("sha256");
  size = 0;

  override _transform(
    chunk: Buffer,
    _enc: BufferEncoding,
    done: (err?: Error | null, data?: Buffer) => void,
  ): void {
    this.hash.update(chunk);
    this.size += chunk.length;
    done(null, chunk);
  }

  get digest(): string {
    return `sha256:${this.hash.digest("hex")}`;
  }
}

/**
 * Streams the layer tar through `streams` (the last one a sink); file contents are read from the
 * host as they are packed.
 */
async function writeLayer(
  entries: LayerEntry[],
  ...streams: [...Transform[], NodeJS.WritableStream]
): Promise<void> {
  const tar = pack();
  const done = pipeline([tar, ...streams]);
  for (const entry of normalizeEntries(entries)) {
    const h = header(entry);
    if (entry.type === "file") {
      await new Promise<void>((resolve, reject) => {
        const stream = tar.entry(h, (err) => (err ? reject(err) : resolve()));
        fs.createReadStream(entry.source).on("error", reject).pipe(stream);
      });
    } else {
      const body = entry.type === "content" ? Buffer.from(entry.content) : undefined;
      await new Promise<void>((resolve, reject) =>
        tar.entry(h, body, (err?: Error | null) => (err ? reject(err) : resolve())),
      );
    }
  }
  tar.finalize();
  await done;
}

/** The config, manifest and index documents for one layer, as the bytes that get hashed. */
export function imageDocuments(
  spec: Pick<ImageSpec, "repository" | "config">,
  /**
   * The layer blob; a compressed one gives its media type and `diffId`, the digest of the tar
   * inside (what the config's rootfs lists).
   */
  layer: { digest: string; size: number; mediaType?: string; diffId?: string },
  tag: (manifestDigest: string) => string,
): { config: string; manifest: string; manifestDigest: string; index: string; reference: string } {
  const config = JSON.stringify({
    architecture: "amd64",
    os: "linux",
    config: spec.config,
    rootfs: { type: "layers", diff_ids: [layer.diffId ?? layer.digest] },
    history: [{ created: EPOCH.toISOString(), created_by: "klutch-pulumi host/local-clusters/images" }],
  });
  const manifest = JSON.stringify({
    schemaVersion: 2,
    mediaType: MEDIA.manifest,
    config: { mediaType: MEDIA.config, digest: sha256(config), size: Buffer.byteLength(config) },
    layers: [{ mediaType: layer.mediaType ?? MEDIA.layer, digest: layer.digest, size: layer.size }],
  });
  const manifestDigest = sha256(manifest);
  const reference = `${spec.repository}:${tag(manifestDigest)}`;
  const index = JSON.stringify({
    schemaVersion: 2,
    mediaType: MEDIA.index,
    manifests: [
      {
        mediaType: MEDIA.manifest,
        digest: manifestDigest,
        size: Buffer.byteLength(manifest),
        platform: { architecture: "amd64", os: "linux" },
        // containerd names the imported image after this annotation.
        annotations: {
          "io.containerd.image.name": reference,
          "org.opencontainers.image.ref.name": reference.slice(reference.lastIndexOf(":") + 1),
        },
      },
    ],
  });
  return { config, manifest, manifestDigest, index, reference };
}

/**
 * Builds the image into `cacheDir` unless an archive of the same content is there already.
 * The layer is always packed (that is how its content is known) but only to a scratch file;
 * the archive's name carries the tag (version and manifest digest), so a cache hit is a file
 * that exists.
 */
export async function buildImage(spec: ImageSpec, cacheDir: string): Promise<BuiltImage> {
  fs.mkdirSync(cacheDir, { recursive: true });
  // Packing a layer only to learn it is cached costs seconds for PostgreSQL's 80 MB: a
  // fingerprint of the spec and of every source file's identity (inode, size, mtime) finds the
  // archive of an unchanged input without reading a byte of it.
  const indexFile = path.join(cacheDir, ".index", `${fingerprint(spec).slice(7)}.json`);
  try {
    const known = JSON.parse(fs.readFileSync(indexFile, "utf8")) as BuiltImage;
    if (fs.existsSync(known.archive)) return { ...known, built: false };
  } catch {
    // not indexed yet
  }
  const result = await packImage(spec, cacheDir);
  fs.mkdirSync(path.dirname(indexFile), { recursive: true });
  fs.writeFileSync(indexFile, JSON.stringify({ ...result, built: false }));
  return result;
}

/** The spec with each host file's identity in place of its content (see buildImage). */
export function fingerprint(spec: ImageSpec): string {
  const files = normalizeEntries(spec.entries).map((e) => {
    if (e.type !== "file") return e;
    const st = fs.statSync(e.source);
    return { ...e, dev: st.dev, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs };
  });
  return sha256(
    JSON.stringify({
      repository: spec.repository,
      version: spec.version,
      config: spec.config,
      files,
      ...(spec.dockerManifest ? { dockerManifest: true } : {}),
    }),
  );
}

/** Drops the cache's older archives once a new one is written (lib/local/image-cache.ts). */
function pruneArchives(cacheDir: string, written: string): void {
  const archives = fs
    .readdirSync(cacheDir)
    .filter((file) => file.endsWith(".oci.tar"))
    // Another worker may drop a file between the listing and its stat.
    .flatMap((file) => {
      const stat = fs.statSync(path.join(cacheDir, file), { throwIfNoEntry: false });
      return stat ? [{ file, mtimeMs: stat.mtimeMs }] : [];
    });
  for (const file of archivesToPrune(archives, [path.basename(written)])) {
    fs.rmSync(path.join(cacheDir, file), { force: true });
  }
}

async function packImage(spec: ImageSpec, cacheDir: string): Promise<BuiltImage> {
  const scratch = path.join(cacheDir, `.layer-${process.pid}-${Date.now()}.tar`);
  try {
    const layerTar = new HashingStream();
    await writeLayer(spec.entries, layerTar, fs.createWriteStream(scratch));
    const layer = { digest: layerTar.digest, size: layerTar.size };
    const docs = imageDocuments(spec, layer, (d) => tagFor(spec.version, d));
    const name = spec.repository.slice(spec.repository.lastIndexOf("/") + 1);
    // The tag names the image inside the archive (index.json), so it is part of the file name:
    // the same content under another version is another archive.
    const archive = path.join(
      cacheDir,
      `${name}-${docs.reference.slice(docs.reference.lastIndexOf(":") + 1)}${spec.dockerManifest ? ".docker" : ""}.oci.tar`,
    );
    const result = {
      reference: docs.reference,
      manifestDigest: docs.manifestDigest,
      layerDigest: layer.digest,
      archive,
    };
    if (fs.existsSync(archive)) return { ...result, built: false };

    // Unique per build, even within one process: two writers never share a scratch file.
    const tmp = `${archive}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
    await writeLayoutArchive(tmp, docs, { file: scratch, ...layer }, spec.dockerManifest);
    fs.renameSync(tmp, archive);
    pruneArchives(cacheDir, archive);
    return { ...result, built: true };
  } finally {
    fs.rmSync(scratch, { force: true });
  }
}

/**
 * The OCI image layout as one tar: `oci-layout`, `index.json` and the config, manifest and layer
 * blobs, with fixed metadata; `dockerManifest` adds Docker's `manifest.json` (see ImageSpec).
 */
async function writeLayoutArchive(
  file: string,
  docs: ReturnType<typeof imageDocuments>,
  layer: { file: string; digest: string; size: number },
  dockerManifest = false,
): Promise<void> {
  const out = pack();
  const written = pipeline(out, fs.createWriteStream(file));
  const add = (name: string, body: string | Buffer) =>
    new Promise<void>((resolve, reject) =>
      out.entry({ name, mode: 0o644, mtime: EPOCH, uid: 0, gid: 0 }, body, (err?: Error | null) =>
        err ? reject(err) : resolve(),
      ),
    );
  await add("oci-layout", JSON.stringify({ imageLayoutVersion: "1.0.0" }));
  await add("index.json", docs.index);
  const blob = (digest: string) => `blobs/sha256/${digest.slice(7)}`;
  await add(blob(sha256(docs.config)), docs.config);
  await add(blob(docs.manifestDigest), docs.manifest);
  if (dockerManifest) {
    const docker = [
      { Config: blob(sha256(docs.config)), RepoTags: [docs.reference], Layers: [blob(layer.digest)] },
    ];
    await add("manifest.json", JSON.stringify(docker));
  }
  await new Promise<void>((resolve, reject) => {
    const entry = out.entry(
      { name: blob(layer.digest), size: layer.size, mode: 0o644, mtime: EPOCH, uid: 0, gid: 0 },
      (err) => (err ? reject(err) : resolve()),
    );
    fs.createReadStream(layer.file).on("error", reject).pipe(entry);
  });
  out.finalize();
  await written;
}

export interface ReleasedImage {
  /** `repository:tag`, as index.json names it (containerd's `io.containerd.image.name`). */
  reference: string;
  /** The manifest's digest: what `repository@sha256:…` pins. */
  manifestDigest: string;
  /** The digest of the uncompressed layer (the config's diff ID). */
  diffId: string;
  /** Bytes of the compressed layer. */
  layerSize: number;
}

/**
 * An image as a release ships it: an OCI image-layout tar at `file`, named `repository:tag`, its
 * layer compressed with zstd (`application/vnd.oci.image.layer.v1.tar+zstd`, image-spec v1.1),
 * as a registry would hold it, so pushing the archive (`skopeo copy oci-archive:…`, `crane push`)
 * keeps the manifest's digest. zstd at level 3 packs the bridge's 473 MiB into about 116 MiB in
 * 2 s, where gzip -6 takes 26 s for 126 MiB; containerd reads zstd layers since 1.5, Docker since
 * 23. Same entries, same bytes: the tar is built as for the node's images and zstd's output
 * depends only on its input and level.
 */
export async function writeReleaseImage(
  spec: Pick<ImageSpec, "repository" | "config" | "entries">,
  tag: string,
  file: string,
): Promise<ReleasedImage> {
  const scratch = `${file}.layer-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    const tar = new HashingStream();
    const compressed = new HashingStream();
    await writeLayer(
      spec.entries,
      tar,
      zlib.createZstdCompress({ params: { [zlib.constants.ZSTD_c_compressionLevel]: 3 } }),
      compressed,
      fs.createWriteStream(scratch),
    );
    const layer = {
      digest: compressed.digest,
      size: compressed.size,
      mediaType: MEDIA.zstdLayer,
      diffId: tar.digest,
    };
    const docs = imageDocuments(spec, layer, () => tag);
    await writeLayoutArchive(file, docs, { file: scratch, ...layer });
    return {
      reference: docs.reference,
      manifestDigest: docs.manifestDigest,
      diffId: layer.diffId,
      layerSize: layer.size,
    };
  } finally {
    fs.rmSync(scratch, { force: true });
  }
}
