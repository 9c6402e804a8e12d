import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import type { Binaries } from "./binaries";

/**
 * Which releases wrote a local cluster's data, kept in `<cluster>/versions.json` beside its etcd
 * directory, so a new toolchain never starts on data it cannot take.
 *
 * Upstream moves a cluster's data one minor at a time and never back: etcd "only supports …
 * upgrading one minor version at a time (e.g. 3.5 - 3.6). Upgrades that skip a minor version are
 * not supported and will likely fail" (etcd.io/docs/v3.6/upgrades/upgrading-etcd/), and
 * kube-apiserver may not skip a minor when upgrading, even in a single-instance cluster
 * (kubernetes.io/releases/version-skew-policy/, "Supported component upgrade order"). The local
 * clusters are throw-away, so the way past a refused step is to make them afresh, which the
 * message says.
 */
export interface DataVersions {
  kubernetes: string;
  etcd: string;
}

/**
 * A cluster whose etcd directory exists but has no versions.json was made before the record
 * began, by the project's pins of that time (host/toolchain/versions.env until stop 63).
 */
export const UNRECORDED_DATA_VERSIONS: DataVersions = { kubernetes: "1.33.4", etcd: "3.5.21" };

/** The releases the binaries really are, from their own `--version` output. */
export function binaryVersions(binaries: Binaries, env: NodeJS.ProcessEnv): DataVersions {
  const said = (binary: string) => execFileSync(binary, ["--version"], { encoding: "utf8", env });
  const kubernetes = /Kubernetes v(\d+\.\d+\.\d+)/.exec(said(binaries["kube-apiserver"]))?.[1];
  const etcd = /etcd Version: (\d+\.\d+\.\d+)/.exec(said(binaries.etcd))?.[1];
  if (!kubernetes || !etcd) {
    throw new Error(
      `cannot tell the versions of ${binaries["kube-apiserver"]} and ${binaries.etcd} from --version`,
    );
  }
  return { kubernetes, etcd };
}

/** The recorded versions; the unrecorded default when data exists without a record; else undefined. */
export function readDataVersions(recordFile: string, etcdDataDir: string): DataVersions | undefined {
  if (fs.existsSync(recordFile)) return JSON.parse(fs.readFileSync(recordFile, "utf8")) as DataVersions;
  return fs.existsSync(etcdDataDir) ? UNRECORDED_DATA_VERSIONS : undefined;
}

export function writeDataVersions(recordFile: string, versions: DataVersions): void {
  fs.writeFileSync(recordFile, `${JSON.stringify(versions, null, 2)}\n`);
}

const minorOf = (version: string): [number, number] => {
  const [major, minor] = version.split(".").map(Number);
  return [major ?? 0, minor ?? 0];
};

/** Why `running` cannot start on data `written` by another release, or undefined when it can. */
function stepProblem(part: string, written: string, running: string): string | undefined {
  const [wMajor, wMinor] = minorOf(written);
  const [rMajor, rMinor] = minorOf(running);
  if (wMajor === rMajor && (rMinor === wMinor || rMinor === wMinor + 1)) return undefined;
  if (wMajor === rMajor && rMinor < wMinor) return `${part} ${running} is older than ${written}: a downgrade`;
  const first = `${wMajor}.${wMinor + 1}`;
  const last = `${rMajor}.${rMinor - 1}`;
  const skipped = wMajor !== rMajor ? "" : ` (skipping ${first === last ? first : `${first}–${last}`})`;
  return `${part} ${written} → ${running} moves more than one minor${skipped}`;
}

/**
 * One message for a cluster whose data the running releases may not take, naming both sets of
 * versions, the upstream rule and the fix; undefined when every part moves at most one minor up.
 */
export function upgradeRefusal(
  cluster: string,
  clusterDir: string,
  written: DataVersions,
  running: DataVersions,
): string | undefined {
  const problems = [
    stepProblem("Kubernetes", written.kubernetes, running.kubernetes),
    stepProblem("etcd", written.etcd, running.etcd),
  ].filter((p): p is string => p !== undefined);
  if (problems.length === 0) return undefined;
  return (
    `local cluster "${cluster}": its data was written by Kubernetes ${written.kubernetes} and etcd ` +
    `${written.etcd}, and this toolchain runs Kubernetes ${running.kubernetes} and etcd ${running.etcd}: ` +
    `${problems.join("; ")}. Upstream moves a cluster's data one minor at a time, never back ` +
    `(kubernetes.io/releases/version-skew-policy, etcd.io/docs/v3.6/upgrades). The local clusters are ` +
    `throw-away: run \`npm run down\`, remove ${clusterDir}, and \`npm run up\` makes it afresh on the new releases`
  );
}
