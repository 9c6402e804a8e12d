import * as fs from "node:fs";
import * as path from "node:path";
import type { Component } from "./types";

export type Binaries = Record<Component, string>;

/** Absolute path of an executable on env's PATH, or undefined. */
export function which(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? "").split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

/**
 * Finds the cluster binaries on the toolchain's PATH. Absolute paths are spawned (rather than
 * bare names) so /proc/<pid>/cmdline says exactly which build is running.
 */
export function resolveBinaries(env: NodeJS.ProcessEnv): Binaries {
  const find = (name: Component): string => {
    const found = which(name, env);
    if (!found) throw new Error(`${name} not found: run \`bash host/scripts/toolchain.sh build\``);
    return found;
  };
  // kube-apiserver first: it is the one a fresh clone misses while the build runs.
  const apiServer = find("kube-apiserver");
  return {
    etcd: find("etcd"),
    "kube-apiserver": apiServer,
    "kube-controller-manager": find("kube-controller-manager"),
  };
}
