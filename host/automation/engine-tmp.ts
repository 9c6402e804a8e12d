import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/**
 * A temporary directory of the engine's own, given to `pulumi` and so to every plugin it starts
 * as TMPDIR, and removed with all in it when the engine is done.
 *
 * Why: the Kubernetes provider writes the kubeconfig of each provider it configures to a new
 * file in the temporary directory, for Helm, and never removes it (pulumi-kubernetes
 * `provider/pkg/provider/provider.go` Configure → `util.go` writeKubeconfigToFile,
 * `os.CreateTemp("", "kubeconfig")`). Every `up`, preview and bridge run left one per cluster:
 * a day of this project's test runs left 4,814 files holding clusters' client keys in /tmp, and a bridge
 * running for weeks would fill its pod's disk with them. The CLI's plugin downloads leave their
 * tarballs there too (sdk `go/common/workspace/plugins.go` tryDownloadToFile).
 */
export interface EngineTmp {
  readonly dir: string;
  /** Removes the directory and all in it; again is a no-op. */
  remove(): void;
}

/** A new private (0700) directory under `parent` (the process's temporary directory). */
export function engineTmp(parent: string = os.tmpdir()): EngineTmp {
  const dir = fs.mkdtempSync(path.join(parent, "klutch-engine-"));
  return { dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** What `withEngineTmp` sets TMPDIR in: a workspace's `envVars`, which the Automation API reads at each command. */
export interface EnvHolder {
  envVars: Record<string, string>;
}

/**
 * Runs `fn` with the holder's TMPDIR set to a directory of its own, then removes the directory
 * (whether `fn` worked or failed) and restores what TMPDIR was. One run at a time per holder: the
 * bridge runs a group's stack (its own workspace) once at a time.
 */
export async function withEngineTmp<T>(holder: EnvHolder, fn: () => Promise<T>, parent?: string): Promise<T> {
  const tmp = engineTmp(parent);
  const before = holder.envVars.TMPDIR;
  holder.envVars.TMPDIR = tmp.dir;
  try {
    return await fn();
  } finally {
    if (before === undefined) delete holder.envVars.TMPDIR;
    else holder.envVars.TMPDIR = before;
    tmp.remove();
  }
}
