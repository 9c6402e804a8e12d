import { execFileSync, spawnSync } from "node:child_process";
import { toolchainEnv } from "../../automation/toolchain";

const env = toolchainEnv();

/** Runs the toolchain's kubectl against one cluster and returns stdout; throws on failure. */
export function kubectl(kubeconfig: string, args: string[]): string {
  return execFileSync("kubectl", ["--kubeconfig", kubeconfig, ...args], { env, encoding: "utf8" });
}

export function kubectlJson<T = any>(kubeconfig: string, args: string[]): T {
  return JSON.parse(kubectl(kubeconfig, [...args, "-o", "json"])) as T;
}

/**
 * Exit status and output of a kubectl call that may fail (for "must be refused" checks);
 * `input` goes to its stdin (a password for `exec -i`, kept out of every argv).
 */
export function kubectlTry(
  kubeconfig: string,
  args: string[],
  input?: string,
): { status: number; stdout: string; stderr: string } {
  const r = spawnSync("kubectl", ["--kubeconfig", kubeconfig, ...args], {
    env,
    encoding: "utf8",
    ...(input !== undefined ? { input } : {}),
  });
  return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** Polls until check() returns true, or fails with what it last saw. */
export async function eventually(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** `kubectl apply` of a YAML document from memory; with dryRun the API server validates without storing. */
export function kubectlApply(
  kubeconfig: string,
  yaml: string,
  dryRun = false,
): { status: number; stdout: string; stderr: string } {
  return kubectlTry(kubeconfig, ["apply", "-f", "-", ...(dryRun ? ["--dry-run=server"] : [])], yaml);
}
