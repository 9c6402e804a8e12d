import * as fs from "node:fs";
import * as path from "node:path";

export interface LocalCrossplaneSource {
  chartPath: string;
  crdsPath: string;
}

/**
 * The Crossplane chart and CRDs the toolchain keeps next to each Crossplane core it built (they
 * are files of the Crossplane Go module): v2's (KLUTCH_CROSSPLANE_CLUSTER_DIR) and 1.20's
 * (KLUTCH_CROSSPLANE_LEGACY_CLUSTER_DIR). The local stack installs from here because it reaches
 * no chart repository. The folder of `version` is taken; fails clearly when none is that version.
 */
export function localCrossplaneSource(
  clusterDirs: readonly (string | undefined)[],
  version: string,
): LocalCrossplaneSource {
  const dirs = clusterDirs.filter((d): d is string => d !== undefined && d !== "");
  if (dirs.length === 0) {
    throw new Error(
      "KLUTCH_CROSSPLANE_CLUSTER_DIR is not set: run `bash host/scripts/toolchain.sh build` and use `npm run pulumi`",
    );
  }
  const builtOf = (dir: string) => /crossplane-([0-9.]+)\/cluster\/?$/.exec(dir)?.[1];
  const clusterDir =
    dirs.find((d) => builtOf(d) === version) ??
    (dirs.length === 1 && !builtOf(dirs[0]!) ? dirs[0] : undefined);
  if (!clusterDir) {
    const built = dirs.map(builtOf).filter((v) => v !== undefined);
    throw new Error(
      `klutch:crossplane.version is ${version} but the toolchain builds Crossplane ${built.join(" and ")}; set crossplane.version to ${built.join(" or ")} or change host/toolchain/versions.env`,
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
