/**
 * The release's images: the bridge image and Klutch's composition function as a Crossplane
 * package. Their layers are tars with fixed metadata in a fixed order (host/local-clusters/images),
 * and `crossplane xpkg build` stamps no time; both hold this machine's Node.js and Pulumi binaries,
 * so they are reproducible on one machine with one toolchain, not across machines.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { repoRoot } from "../../host/automation/toolchain";
import { bridgeSpec } from "../../host/local-clusters/images/bridge-image";
import { imageCacheDir } from "../../host/local-clusters/images/catalog";
import { functionImageSpec } from "../../host/local-clusters/images/function-image";
import {
  buildImage,
  writeReleaseImage,
  type ReleasedImage,
} from "../../host/local-clusters/images/oci-layout";
import { buildXpkg } from "../../host/local-clusters/packages/publish";
import { FUNCTION_PACKAGE } from "../../lib/local/packages";
import { BRIDGE_IMAGE_REPOSITORY } from "../../lib/release/publication";
import { releaseVersion } from "./version";

/**
 * The bridge image (host/local-clusters/images/bridge-image.ts: the bridge transpiled, its packages,
 * Node.js, the Pulumi CLI and plugins) as a release ships it, tagged `v<version>`.
 */
export async function releaseBridgeImage(
  outDir: string,
  env: NodeJS.ProcessEnv,
  version = releaseVersion(),
): Promise<ReleasedImage & { file: string }> {
  const spec = bridgeSpec(env, repoRoot, imageCacheDir(env));
  const file = `klutch-bridge-v${version}-linux-amd64.oci.tar`;
  fs.mkdirSync(outDir, { recursive: true });
  const image = await writeReleaseImage(
    { ...spec, repository: BRIDGE_IMAGE_REPOSITORY },
    `v${version}`,
    path.join(outDir, file),
  );
  return { ...image, file };
}

/**
 * Klutch's composition function as a Function package (the one the local stack installs from its
 * registry), built by the toolchain's `crossplane xpkg build` with its runtime image embedded.
 * Push it with `crossplane xpkg push --package-files=<file> <registry>/<repository>:v<version>`.
 */
export async function functionPackage(
  outDir: string,
  version: string,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  const cli = env.KLUTCH_CROSSPLANE_CLI;
  if (!cli || !fs.existsSync(cli))
    throw new Error(
      `the crossplane CLI is not built (${cli ?? "unset"}): run \`bash host/scripts/toolchain.sh build\``,
    );
  const cacheDir = imageCacheDir(env);
  const image = await buildImage(
    functionImageSpec(repoRoot, cacheDir, `klutch.local/${FUNCTION_PACKAGE.name}`),
    cacheDir,
  );
  const file = `${FUNCTION_PACKAGE.name}-v${version}.xpkg`;
  await buildXpkg(
    cli,
    {
      packageRoot: path.join(repoRoot, FUNCTION_PACKAGE.packageRoot),
      runtimeImage: image.archive,
      out: path.join(outDir, file),
    },
    env,
  );
  return file;
}
