import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/**
 * Kernel settings the kubelet writes on the host at start and has no option to leave alone
 * (kubernetes pkg/kubelet/cm/container_manager_linux.go, setupKernelTunables, with
 * protectKernelDefaults false: it sets vm.overcommit_memory=1, vm.panic_on_oom=0,
 * kernel.panic=10, kernel.panic_on_oops=1 and raises the root key quotas). A local node is a
 * guest on a developer's or CI's machine, so the values found before the first node started
 * are saved and put back when the last node stops.
 */
export const KUBELET_TUNABLES = [
  "vm.overcommit_memory",
  "vm.panic_on_oom",
  "kernel.panic",
  "kernel.panic_on_oops",
  "kernel.keys.root_maxkeys",
  "kernel.keys.root_maxbytes",
] as const;

const procPath = (key: string) => path.join("/proc/sys", ...key.split("."));

/** Where the host's own values wait while nodes run: one file for the machine, kept until restored. */
export const SAVED_TUNABLES_FILE = path.join(os.tmpdir(), "klutch-local-kernel-tunables.json");

export function readTunables(): Record<string, string> {
  const values: Record<string, string> = {};
  for (const key of KUBELET_TUNABLES) {
    try {
      values[key] = fs.readFileSync(procPath(key), "utf8").trim();
    } catch {
      // Not in this kernel or not readable: nothing to save or restore.
    }
  }
  return values;
}

/** Saves the host's values unless a running node already did (its saved copy is the original). */
export function saveHostTunables(file = SAVED_TUNABLES_FILE): void {
  if (fs.existsSync(file)) return;
  fs.writeFileSync(file, JSON.stringify(readTunables()), { mode: 0o600 });
}

/** Puts the saved values back and forgets them; returns the keys that differed and were restored. */
export function restoreHostTunables(file = SAVED_TUNABLES_FILE): string[] {
  let saved: Record<string, string>;
  try {
    saved = JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, string>;
  } catch {
    return [];
  }
  const now = readTunables();
  const restored: string[] = [];
  for (const [key, value] of Object.entries(saved)) {
    if (now[key] === value) continue;
    try {
      fs.writeFileSync(procPath(key), value);
      restored.push(key);
    } catch {
      // A read-only /proc/sys (an unprivileged run) cannot have been changed by a kubelet either.
    }
  }
  fs.rmSync(file, { force: true });
  return restored;
}
