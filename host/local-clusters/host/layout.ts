import * as path from "node:path";
import type { Component } from "./types";
import { isDnsLabel } from "../../../lib/net/dns";

/** Where everything of one cluster lives: `<stateDir>/<name>/{pki,etcd,logs,pids,ports.json,versions.json,kubeconfig}`. */
export interface ClusterLayout {
  name: string;
  dir: string;
  pkiDir: string;
  etcdDataDir: string;
  logsDir: string;
  pidsDir: string;
  portsFile: string;
  /** Which Kubernetes and etcd wrote the data (data-versions.ts). */
  versionsFile: string;
  kubeconfig: string;
  /** The controller-manager's own kubeconfig (its client cert, not admin). */
  controllerManagerKubeconfig: string;
  logFile(component: Component): string;
  pidFile(component: Component): string;
}

// Cluster names become directory names and certificate subjects: keep them DNS labels.
export function isValidClusterName(name: string): boolean {
  return isDnsLabel(name);
}

export function validateClusterName(name: string): void {
  if (!isValidClusterName(name)) {
    throw new Error(`invalid cluster name "${name}": use lower-case letters, digits and '-' (a DNS label)`);
  }
}

export function clusterLayout(stateDir: string, name: string): ClusterLayout {
  validateClusterName(name);
  const dir = path.join(path.resolve(stateDir), name);
  const pkiDir = path.join(dir, "pki");
  const logsDir = path.join(dir, "logs");
  const pidsDir = path.join(dir, "pids");
  return {
    name,
    dir,
    pkiDir,
    etcdDataDir: path.join(dir, "etcd"),
    logsDir,
    pidsDir,
    portsFile: path.join(dir, "ports.json"),
    versionsFile: path.join(dir, "versions.json"),
    kubeconfig: path.join(dir, "kubeconfig"),
    controllerManagerKubeconfig: path.join(pkiDir, "controller-manager.kubeconfig"),
    logFile: (component) => path.join(logsDir, `${component}.log`),
    pidFile: (component) => path.join(pidsDir, `${component}.pid`),
  };
}
