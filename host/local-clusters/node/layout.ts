import { createHash } from "node:crypto";
import * as path from "node:path";
import { nodeStatePath } from "../../../lib/local/node-state";

/** The processes of one node, in start order (containerd first: the kubelet needs its socket). */
export const NODE_COMPONENTS = ["containerd", "kubelet", "kube-proxy", "kube-scheduler"] as const;
export type NodeComponent = (typeof NODE_COMPONENTS)[number];

/** Binary names of everything a node runs on the host, for the leftover sweep of `down`. */
export const NODE_PROCESS_NAMES: readonly string[] = [...NODE_COMPONENTS, "containerd-shim-runc-v2"];

/** Where a cluster's node lives: `<stateDir>/<cluster>/node/…`. */
export interface NodeLayout {
  dir: string;
  /** Addresses and names chosen at the first start, kept so a restart reuses them (node.json). */
  stateFile: string;
  pkiDir: string;
  containerdConfig: string;
  /** containerd's registry host configuration (`<host:port>/hosts.toml`), rewritten on start. */
  registryHostsDir: string;
  containerdRoot: string;
  containerdState: string;
  containerdSocket: string;
  cniConfDir: string;
  /** host-local IPAM's record of handed-out pod addresses. */
  cniIpamDir: string;
  kubeletRoot: string;
  kubeletConfig: string;
  kubeletKubeconfig: string;
  podLogsDir: string;
  proxyConfig: string;
  proxyKubeconfig: string;
  schedulerKubeconfig: string;
  logFile(component: NodeComponent): string;
  pidFile(component: NodeComponent): string;
}

export function nodeLayout(clusterDir: string): NodeLayout {
  const dir = path.join(clusterDir, "node");
  const containerd = path.join(dir, "containerd");
  const kubeletRoot = path.join(dir, "kubelet");
  const pkiDir = path.join(dir, "pki");
  return {
    dir,
    stateFile: nodeStatePath(clusterDir),
    pkiDir,
    containerdConfig: path.join(containerd, "config.toml"),
    registryHostsDir: path.join(containerd, "certs.d"),
    containerdRoot: path.join(containerd, "root"),
    containerdState: path.join(containerd, "state"),
    containerdSocket: path.join(containerd, "containerd.sock"),
    cniConfDir: path.join(dir, "cni", "net.d"),
    cniIpamDir: path.join(dir, "cni", "ipam"),
    kubeletRoot,
    kubeletConfig: path.join(dir, "kubelet.yaml"),
    kubeletKubeconfig: path.join(pkiDir, "kubelet.kubeconfig"),
    podLogsDir: path.join(dir, "pod-logs"),
    proxyConfig: path.join(dir, "kube-proxy.yaml"),
    proxyKubeconfig: path.join(pkiDir, "kube-proxy.kubeconfig"),
    schedulerKubeconfig: path.join(pkiDir, "kube-scheduler.kubeconfig"),
    logFile: (c) => path.join(clusterDir, "logs", `${c}.log`),
    pidFile: (c) => path.join(clusterDir, "pids", `${c}.pid`),
  };
}

/**
 * A short id for the node of the cluster in `clusterDir`, from its absolute path: two state
 * dirs (a developer's `.klutch/local` and a test's temp dir) may both hold a `control-plane`,
 * and the machine-wide names below (network namespace, host interface, cgroup, nft table)
 * must not collide.
 */
export function nodeId(clusterDir: string): string {
  return createHash("sha256").update(path.resolve(clusterDir)).digest("hex").slice(0, 8);
}

/** The host end of every node's link: `kn<id>`; the host forwards only between these. */
export const HOST_INTERFACE_PREFIX = "kn";

/** Machine-wide names of one node (interface names have at most 15 characters). */
export interface NodeNames {
  netns: string;
  hostInterface: string;
  /** The cgroup (in every hierarchy) that holds the node's pods: the kubelet's cgroupRoot. */
  cgroupRoot: string;
  /**
   * The host's nft table: the node's API server traffic to loopback, and what the host
   * forwards from the node (to other nodes only).
   */
  nftTable: string;
}

export function nodeNames(id: string): NodeNames {
  return {
    netns: `klutch-${id}`,
    hostInterface: `${HOST_INTERFACE_PREFIX}${id}`,
    cgroupRoot: `/klutch-${id}`,
    nftTable: `klutch-node-${id}`,
  };
}
