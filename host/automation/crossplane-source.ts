import * as path from "node:path";
import type { EnvironmentConfig } from "../../lib/config/schema";
import type { CrossplanePlan } from "../../lib/crossplane/crossplane-plan";
import { localCrossplaneSource } from "./local-crossplane-source";

/** Where the Crossplane chart (and, from the toolchain, its CRDs) come from. */
export type CrossplaneSource = { chart: { repository: string } | { path: string }; crdsPath?: string };

/**
 * The chart source the plan asks for: the toolchain's copy of the chart of the plan's version on
 * local clusters and for a local process (no chart repository is reachable there), else the
 * configured chart folder or repository. The CRDs are applied by Pulumi only where no
 * Crossplane pod's init container does it (a local process). Shared by the program and the
 * provider's Environment, so both install the same Crossplane. The toolchain is asked for its
 * folders only when the plan takes its chart: a released plugin has no toolchain (nor this
 * repository's host/ scripts) and installs no local cluster.
 */
export function crossplaneSource(
  config: EnvironmentConfig,
  plan: CrossplanePlan,
  projectDir: string,
  toolchainClusterDirs: () => readonly (string | undefined)[],
): { ok: true; source: CrossplaneSource } | { ok: false; setting: string; message: string } {
  const xp = config.crossplane;
  if (plan.toolchainChart) {
    try {
      const local = localCrossplaneSource(toolchainClusterDirs(), plan.version);
      return {
        ok: true,
        source: {
          chart: { path: local.chartPath },
          ...(plan.run.kind === "process" ? { crdsPath: local.crdsPath } : {}),
        },
      };
    } catch (e) {
      return {
        ok: false,
        setting: plan.run.kind === "process" ? "crossplane.runLocally" : "controlPlane.infrastructure",
        message: (e as Error).message,
      };
    }
  }
  return {
    ok: true,
    source: {
      chart: xp.chartPath
        ? { path: path.resolve(projectDir, xp.chartPath) }
        : { repository: xp.chartRepository },
    },
  };
}
