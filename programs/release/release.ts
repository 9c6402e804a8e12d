/**
 * A release in outDir (`npm run release`, dist/):
 *
 *   pulumi-resource-klutch-v<version>-<os>-<arch>.tar.gz   the plugin, one per platform (plugin-archives.ts)
 *   klutch-pulumi-<version>.tgz                            the Node.js SDK (npm pack)
 *   pulumi_klutch-<version>-py3-none-any.whl               the Python SDK, wheel
 *   pulumi_klutch-<version>.tar.gz                         the Python SDK, sdist
 *   goproxy/github.com/anynines/klutch-pulumi/sdk/go/@v/v<version>.{zip,mod,info}
 *                                                          the Go SDK as a module proxy serves it
 *   Anynines.Klutch-<version>.tar.gz                       the .NET project as it is (no .NET SDK here to pack it)
 *   klutch-bridge-v<version>-linux-amd64.oci.tar           the bridge image, OCI layout, zstd layer
 *   function-klutch-v<version>.xpkg                        Klutch's composition function, a Crossplane package
 *   IMAGES                                                 the bridge image's reference pinned by digest
 *   SHA256SUMS
 *
 * Upload the plugin archives where the schema's pluginDownloadURL points (lib/release/publication.ts)
 * and a program's first `pulumi preview` installs the plugin by itself; or install one by hand with
 * `pulumi plugin install resource klutch <version> --file <archive>`. Reproducible: the same commit
 * gives the same bytes (tar-gz.ts; the images on one machine with one toolchain, images.ts).
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { toolchainEnv } from "../../host/automation/toolchain";
import type { ReleasedImage } from "../../host/local-clusters/images/oci-layout";
import { goModule } from "./go-module";
import { functionPackage, releaseBridgeImage } from "./images";
import {
  PLATFORMS,
  bundleProvider,
  bundledPackages,
  pluginArchiveName,
  pluginArchives,
  type Platform,
} from "./plugin-archives";
import { dotnetProject, sdkPackages, sdkTrees } from "./sdk-packages";
import { sourceDate } from "./tar-gz";
import { releaseVersion } from "./version";

export interface ReleaseResult {
  /** The plugin archive of this machine's platform (linux-amd64), for `pulumi plugin install --file`. */
  archive: string;
  sha256: string;
  /** Every platform's plugin archive in outDir. */
  pluginArchives: Record<Platform, string>;
  /** The bridge image's archive in outDir, and its reference and digests (unless `images: false`). */
  bridgeImage?: ReleasedImage & { file: string };
  /** Every file written, by name, with its SHA-256 (what SHA256SUMS lists). */
  files: Record<string, string>;
  /** Bytes of the bundle per npm package (and "project" for this repository's code), largest first. */
  packages: [string, number][];
}

export async function release(opts: {
  root: string;
  outDir: string;
  log: (m: string) => void;
  /** The toolchain's environment (its Python), when the caller has it already. */
  env?: NodeJS.ProcessEnv;
  /** Also the bridge image and the Function package (default); a check of the SDKs alone skips them. */
  images?: boolean;
  /** Where the SDKs say the plugin is served, when not where the schema says (a mirror, a test's server). */
  pluginDownloadURL?: string;
}): Promise<ReleaseResult> {
  const version = releaseVersion(opts.root);
  const seconds = sourceDate(opts.root);
  const { js, meta } = await bundleProvider(opts.root);
  const archives = await pluginArchives(js, version, new Date(seconds * 1000));
  fs.mkdirSync(opts.outDir, { recursive: true });
  for (const [name, bytes] of archives) fs.writeFileSync(path.join(opts.outDir, name), bytes);

  const env = opts.env ?? toolchainEnv();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-release-sdks-"));
  const artifacts: string[] = [];
  try {
    const sdkRoot = sdkTrees(work, opts.pluginDownloadURL);
    artifacts.push(
      ...(await sdkPackages(sdkRoot, opts.outDir, seconds, env)),
      ...goModule(sdkRoot, opts.outDir, version, seconds, env),
      await dotnetProject(sdkRoot, opts.outDir, version, seconds),
    );
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  let bridgeImage: (ReleasedImage & { file: string }) | undefined;
  if (opts.images !== false) {
    bridgeImage = await releaseBridgeImage(opts.outDir, env, version);
    const pinned = `${bridgeImage.reference}@${bridgeImage.manifestDigest}`;
    fs.writeFileSync(path.join(opts.outDir, "IMAGES"), `${pinned}  ${bridgeImage.file}\n`);
    artifacts.push(bridgeImage.file, await functionPackage(opts.outDir, version, env), "IMAGES");
  }
  const files = Object.fromEntries(
    [...archives.keys(), ...artifacts].sort().map((f) => [
      f,
      createHash("sha256")
        .update(fs.readFileSync(path.join(opts.outDir, f)))
        .digest("hex"),
    ]),
  );
  fs.writeFileSync(
    path.join(opts.outDir, "SHA256SUMS"),
    Object.entries(files)
      .map(([f, sum]) => `${sum}  ${f}\n`)
      .join(""),
  );
  for (const f of [...archives.keys(), ...artifacts])
    opts.log(`${f}: ${(fs.statSync(path.join(opts.outDir, f)).size / 1024).toFixed(0)} KiB`);
  const packages = bundledPackages(meta);
  opts.log(
    `the bundle: ${(js.length / 2 ** 20).toFixed(1)} MiB; largest in it: ${packages
      .slice(0, 10)
      .map(([p, n]) => `${p} ${(n / 2 ** 20).toFixed(2)} MiB`)
      .join(", ")}`,
  );
  const hostArchive = pluginArchiveName(version, "linux-amd64");
  return {
    archive: path.join(opts.outDir, hostArchive),
    sha256: files[hostArchive]!,
    pluginArchives: Object.fromEntries(
      PLATFORMS.map((p) => [p, path.join(opts.outDir, pluginArchiveName(version, p))]),
    ) as Record<Platform, string>,
    bridgeImage,
    files,
    packages,
  };
}
