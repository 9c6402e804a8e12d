/**
 * Which Crossplane core an environment runs. Pure; host/toolchain/versions.env pins the same two
 * (host/automation/toolchain.test.ts checks it).
 *
 * - v2 (`CROSSPLANE_DEFAULT_VERSION`) everywhere a core runs as the chart's pods: local nodes and
 *   any other cluster. Klutch's own Configuration asks for `>=v1.17.1`, its compositions are all
 *   Pipeline mode and its v1 XRDs with claims run on v2 as LegacyCluster XRs (docs/versions.md).
 * - 1.20 (`CROSSPLANE_LEGACY_VERSION`) for a core run as a process on this machine
 *   (`crossplane.runLocally`): it runs no function pods, and its compositions are rendered in
 *   Resources mode, which v2 removed; on v2 a process core would need the External package runtime
 *   and the function as a process beside it (docs/versions.md), which this project does not drive
 *   yet. Environments on upstream Klutch's supported line (1.17 to 1.20) set it too.
 */
export const CROSSPLANE_DEFAULT_VERSION = "2.4.0";
export const CROSSPLANE_LEGACY_VERSION = "1.20.11";

/** The versions `crossplane.version` accepts: Klutch's 1.17 to 1.20, and v2 up to the newest built here. */
export const CROSSPLANE_VERSION_PATTERN = /^(1\.(1[7-9]|20)|2\.[0-4])\.\d+$/;

export function crossplaneMajor(version: string): number {
  return Number(version.split(".")[0]);
}

/** The core an environment gets when `crossplane.version` is left out. */
export function defaultCrossplaneVersion(runLocally: boolean): string {
  return runLocally ? CROSSPLANE_LEGACY_VERSION : CROSSPLANE_DEFAULT_VERSION;
}

/**
 * Why a given version cannot run the way the environment runs core, or undefined. A process core
 * runs only 1.x here (see above).
 */
export function crossplaneVersionProblem(version: string, runLocally: boolean): string | undefined {
  if (!runLocally || crossplaneMajor(version) < 2) return undefined;
  return `is ${version}, but Crossplane core run as a process (crossplane.runLocally) runs only Crossplane 1.x here: v2 removed the Resources-mode compositions such a core uses, and would need the External package runtime with Klutch's function as a process beside it. Set crossplane.version to ${CROSSPLANE_LEGACY_VERSION} (or leave it out), or give the control plane a node so Crossplane runs as the chart's pods`;
}

/** The minors a control plane goes through, oldest first: Crossplane upgrades one minor at a time. */
const MINOR_LINE = ["1.17", "1.18", "1.19", "1.20", "2.0", "2.1", "2.2", "2.3", "2.4"];

function minorOf(version: string): string {
  return version.replace(/^v/, "").split(".").slice(0, 2).join(".");
}

/**
 * Why a control plane running Crossplane `running` cannot go to `target` in one `up`, or undefined.
 * Crossplane supports upgrading one minor at a time (1.20 → 2.0 → 2.1 …; docs.crossplane.io
 * "Upgrade to Crossplane v2", and each release's notes) and no downgrade; a patch moves freely.
 */
export function crossplaneUpgradeProblem(running: string, target: string): string | undefined {
  const from = MINOR_LINE.indexOf(minorOf(running));
  const to = MINOR_LINE.indexOf(minorOf(target));
  if (from < 0 || to < 0 || to - from === 0 || to - from === 1) return undefined;
  if (to < from)
    return `is ${target}, but the control plane runs Crossplane ${running} and Crossplane has no downgrade: set crossplane.version to ${running}, or remove Crossplane from the control plane first`;
  const path = MINOR_LINE.slice(from + 1, to + 1).map((m) => `${m}.x`);
  return `is ${target}, but the control plane runs Crossplane ${running} and Crossplane upgrades one minor at a time: run up with crossplane.version set to each of ${path.join(", ")} in turn (the last being ${target})`;
}

/**
 * The Crossplane version an image reference names, or undefined: `v1.20.11` as published,
 * `1.20.11-<digest>` as the local nodes' image, with or without a digest.
 */
export function imageCrossplaneVersion(image: string): string | undefined {
  const tag = /:([^:/@]+)(@.*)?$/.exec(image)?.[1];
  return tag ? /^v?(\d+\.\d+\.\d+)/.exec(tag)?.[1] : undefined;
}
