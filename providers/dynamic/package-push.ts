import type * as pulumi from "@pulumi/pulumi";
import {
  MEDIA_TYPES,
  PACKAGE_STREAM_FILE,
  packageImageDocuments,
  type PackageLayer,
} from "../../lib/crossplane/configuration-package";
import type { CompleteProvider } from "./provider-type";
import { KlutchResource } from "./klutch-resource";

/**
 * A Crossplane package pushed to an OCI registry, as `crossplane xpkg build` + `xpkg push` would:
 * one gzip layer holding `package.yaml`, annotated `io.crossplane.xpkg: base`
 * (lib/crossplane/configuration-package.ts says what Crossplane reads), pushed by the OCI
 * distribution API (blob uploads, then the manifest under its tag). The same stream gives the
 * same bytes, so a push of an unchanged package only finds its blobs there.
 *
 * Nothing is deleted from the registry on delete: a tag is content-addressed here (the tag names
 * the stream's digest), the registry may refuse deletes, and a package revision Crossplane still
 * runs would lose its source. The modules it needs are required at run time (the dynamic provider
 * runs in a plain Node process; see export-request.ts).
 */

export interface PackagePushInputs {
  /** `host:port` of the registry, as the cluster's package manager reaches it: the reference's. */
  registry: string;
  /** `host:port` to push to, where this machine reaches the registry elsewhere (loopback); `registry` if not given. */
  pushRegistry?: string;
  repository: string;
  tag: string;
  /** PEM of the CA the registry's certificate is from. */
  caBundle: string;
  packageYaml: string;
}

export interface PackagePushOutputs extends PackagePushInputs {
  /** `<registry>/<repository>:<tag>`: what a Configuration's `spec.package` names. */
  reference: string;
  manifestDigest: string;
}

const REFERENCE_PART = /^[a-z0-9]+(?:[._-][a-z0-9]+)*(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*$/;
const TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

export function checkPackagePush(news: Record<string, unknown>): pulumi.dynamic.CheckFailure[] {
  const failures: pulumi.dynamic.CheckFailure[] = [];
  const str = (k: string) => (typeof news[k] === "string" ? news[k] : undefined);
  for (const k of ["registry", ...(news.pushRegistry === undefined ? [] : ["pushRegistry"])])
    if (!/^[A-Za-z0-9.-]+(:\d+)?$/.test(str(k) ?? ""))
      failures.push({
        property: k,
        reason: `${k} ${JSON.stringify(news[k])} is not host[:port]; give the registry's address, e.g. 10.0.0.1:5000`,
      });
  if (!REFERENCE_PART.test(str("repository") ?? ""))
    failures.push({
      property: "repository",
      reason: `repository ${JSON.stringify(news.repository)} is not an OCI repository name (lower-case path, e.g. klutch/network-connector)`,
    });
  if (!TAG.test(str("tag") ?? ""))
    failures.push({
      property: "tag",
      reason: `tag ${JSON.stringify(news.tag)} is not an OCI tag ([A-Za-z0-9_.-], up to 128)`,
    });
  if (!(str("caBundle") ?? "").includes("BEGIN CERTIFICATE"))
    failures.push({ property: "caBundle", reason: "caBundle must be a PEM certificate (the registry's CA)" });
  if (!(str("packageYaml") ?? "").includes("meta.pkg.crossplane.io"))
    failures.push({
      property: "packageYaml",
      reason: "packageYaml must be a package stream with its meta object",
    });
  return failures;
}

/** The layer blob: a tar of `package.yaml` (fixed owner and time), gzip-compressed. */
async function packLayer(packageYaml: string): Promise<{ blob: Buffer; layer: PackageLayer }> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { pack } = require("tar-stream") as typeof import("tar-stream");
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const zlib = require("node:zlib") as typeof import("node:zlib");
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const crypto = require("node:crypto") as typeof import("node:crypto");
  const tar = pack();
  const chunks: Buffer[] = [];
  tar.on("data", (c: Buffer) => chunks.push(c));
  const ended = new Promise<void>((resolve, reject) => {
    tar.on("end", resolve);
    tar.on("error", reject);
  });
  tar.entry(
    { name: PACKAGE_STREAM_FILE, mode: 0o644, mtime: new Date(0), uid: 0, gid: 0, uname: "", gname: "" },
    packageYaml,
  );
  tar.finalize();
  await ended;
  const raw = Buffer.concat(chunks);
  const blob = zlib.gzipSync(raw, { level: 9 });
  const digest = (b: Buffer) => `sha256:${crypto.createHash("sha256").update(b).digest("hex")}`;
  return { blob, layer: { digest: digest(blob), size: blob.length, diffId: digest(raw) } };
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function request(
  url: string,
  caBundle: string,
  method: string,
  headers: Record<string, string> = {},
  body?: Buffer | string,
): Promise<Answer> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const https = require("node:https") as typeof import("node:https");
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      { method, ca: caBundle, agent: false, timeout: 30_000, headers },
      (res) => {
        const parts: Buffer[] = [];
        res.on("data", (c: Buffer) => parts.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(parts).toString(),
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`${method} ${url}: no answer within 30 s`)));
    req.on("error", reject);
    req.end(body);
  });
}

function failed(what: string, a: Answer): Error {
  return new Error(`${what}: HTTP ${a.status} ${a.body.slice(0, 300).trim()}`);
}

/** Pushes a blob unless the registry has it (distribution spec: HEAD, POST an upload, PUT it). */
async function pushBlob(base: string, caBundle: string, digest: string, blob: Buffer): Promise<void> {
  const head = await request(`${base}/blobs/${digest}`, caBundle, "HEAD");
  if (head.status === 200) return;
  const start = await request(`${base}/blobs/uploads/`, caBundle, "POST", { "Content-Length": "0" });
  const location = start.headers.location;
  if (start.status !== 202 || typeof location !== "string")
    throw failed(`starting the upload of ${digest}`, start);
  const url = new URL(location, base);
  url.searchParams.set("digest", digest);
  const put = await request(
    url.toString(),
    caBundle,
    "PUT",
    { "Content-Type": "application/octet-stream", "Content-Length": String(blob.length) },
    blob,
  );
  if (put.status !== 201) throw failed(`uploading ${digest}`, put);
}

export async function pushPackage(inputs: PackagePushInputs): Promise<PackagePushOutputs> {
  const { blob, layer } = await packLayer(inputs.packageYaml);
  const docs = packageImageDocuments(layer);
  const base = `https://${inputs.pushRegistry ?? inputs.registry}/v2/${inputs.repository}`;
  const what = `pushing ${inputs.registry}/${inputs.repository}:${inputs.tag}`;
  try {
    await pushBlob(base, inputs.caBundle, layer.digest, blob);
    await pushBlob(base, inputs.caBundle, docs.configDigest, Buffer.from(docs.config));
    const put = await request(
      `${base}/manifests/${inputs.tag}`,
      inputs.caBundle,
      "PUT",
      { "Content-Type": MEDIA_TYPES.manifest, "Content-Length": String(Buffer.byteLength(docs.manifest)) },
      docs.manifest,
    );
    if (put.status !== 201) throw failed("putting the manifest", put);
  } catch (err) {
    throw new Error(`${what}: ${(err as Error).message}`);
  }
  return {
    ...inputs,
    reference: `${inputs.registry}/${inputs.repository}:${inputs.tag}`,
    manifestDigest: docs.manifestDigest,
  };
}

const INPUT_KEYS = ["registry", "pushRegistry", "repository", "tag", "caBundle", "packageYaml"] as const;

export const packagePushProvider: CompleteProvider<
  PackagePushInputs,
  PackagePushOutputs,
  "check" | "diff" | "update" | "delete"
> = {
  check(_olds, news) {
    const failures = checkPackagePush(news as unknown as Record<string, unknown>);
    return Promise.resolve(failures.length > 0 ? { failures } : { inputs: news });
  },
  diff(_id, olds, news) {
    const changed = INPUT_KEYS.filter((k) => olds[k] !== news[k]);
    return Promise.resolve({ changes: changed.length > 0 });
  },
  async create(inputs) {
    const outs = await pushPackage(inputs);
    return { id: outs.reference, outs };
  },
  async update(_id, _olds, news) {
    return { outs: await pushPackage(news) };
  },
  delete() {
    return Promise.resolve();
  },
};

export interface PackagePushArgs {
  registry: pulumi.Input<string>;
  pushRegistry?: pulumi.Input<string>;
  repository: pulumi.Input<string>;
  tag: pulumi.Input<string>;
  caBundle: pulumi.Input<string>;
  packageYaml: pulumi.Input<string>;
}

/** A package stream pushed to a registry; `reference` is what a package object installs. */
export class PackagePush extends KlutchResource {
  declare public readonly reference: pulumi.Output<string>;
  declare public readonly manifestDigest: pulumi.Output<string>;

  constructor(name: string, args: PackagePushArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      packagePushProvider,
      name,
      { ...args, reference: undefined, manifestDigest: undefined },
      opts,
      "klutch",
      "PackagePush",
    );
  }
}
