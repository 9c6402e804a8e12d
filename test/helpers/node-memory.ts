import * as fs from "node:fs";
import * as path from "node:path";
import { cgroupMounts } from "../../host/local-clusters/node/host";
import { NODE_COMPONENTS } from "../../host/local-clusters/node/layout";
import type { LocalNode } from "../../host/local-clusters/node/node";

/** Resident memory of a process in bytes (VmRSS), 0 when it is gone. */
function rss(pid: number): number {
  try {
    const kb = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb ? Number(kb) * 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * What one local node holds in memory: its own processes (containerd, kubelet, kube-proxy,
 * kube-scheduler) by their resident sets, and its pods by the resident memory the memory
 * cgroup (v1) of the kubelet's cgroupRoot counts for them (shims and pause containers included).
 * The processes are the ones running now, by their pid files: the pids an earlier `up` reported
 * are gone once a later one restarted a component, and read as 0.
 */
export function nodeMemory(node: LocalNode): { processes: number; pods: number } {
  const processes = NODE_COMPONENTS.reduce((sum, c) => sum + rss(node.pid(c) ?? 0), 0);
  const memory = cgroupMounts().find((m) => path.basename(m).split(",").includes("memory"));
  let pods = 0;
  if (memory) {
    const stat = path.join(memory, node.names.cgroupRoot, "memory.stat");
    const line = fs.existsSync(stat) ? /^total_rss (\d+)$/m.exec(fs.readFileSync(stat, "utf8")) : null;
    pods = line ? Number(line[1]) : 0;
  }
  return { processes, pods };
}

export const mib = (bytes: number) => `${Math.round(bytes / 1048576)} MiB`;
