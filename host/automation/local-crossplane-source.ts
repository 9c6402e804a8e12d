import * as fs from "node:fs";
import * as path from "node:path";

export interface LocalCrossplaneSource {
  chartPath: string;
  crdsPath: string;
}

/**
 * The Crossplane chart and CRDs the toolchain keeps next to the Crossplane binary it built
 * (they are files of the Crossplane Go module). The local stack installs from here because
 * it reaches no chart repository. Fails clearly when the toolchain has a different version.
 */
export function localCrossplaneSource(
  clusterDir: string | undefined,
  version: string,
): LocalCrossplaneSource {
  if (!clusterDir) {
    throw new Error(
      "KLUTCH_CROSSPLANE_CLUSTER_DIR is not set: run `bash host/scripts/toolchain.sh build` and use `npm run pulumi`",
    );
  }
  const built = /crossplane-([0-9.]+)\/cluster\/?$/.exec(clusterDir)?.[1];
  if (built && built !== version) {
    throw new Error(
      `klutch:crossplane.version is ${version} but the toolchain builds Crossplane ${built}; set crossplane.version to ${built} or change host/toolchain/versions.env`,
    );
  }
  const source = {
    chartPath: path.join(clusterDir, "charts", "crossplane"),
    crdsPath: path.join(clusterDir, "crds"),
  };
  for (const dir of [source.chartPath, source.crdsPath]) {
    if (!fs.existsSync(dir))
      throw new Error(`${dir} does not exist: run \`bash host/scripts/toolchain.sh build\``);
  }
  return source;
}
