import { execFileSync, spawnSync } from "node:child_process";
import { toolchainEnv } from "../../host/automation/toolchain";

// Go's collector at 400 % for these short calls: most of a kubectl call's CPU is its start-up,
// which allocates a growing heap and collects it again and again. `kubectl get pods -A -o json` on
// a local cluster took 0.077 CPU-s against 0.110 with Go's default (six runs each, 2026-11-29) for
// 2 MB more memory, and most of the 2,517 kubectl processes of a CI run are these calls (npm run bench:ci-cpu).
const env = { ...toolchainEnv(), GOGC: "400" };

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

/** eventually()'s first pause between two checks, and the longest it grows to. */
const POLL_FIRST_MS = 250;
const POLL_MAX_MS = 1_000;

/**
 * The pause after the given number of failed checks: 250 ms, growing by half each time to 1 s.
 * Most checks are a kubectl process (about 80 ms of CPU), and the e2e run is CPU-bound: a fixed
 * 500 ms made 2,783 of them in one CI run (stop 51's process accounting), most in long waits.
 * A short wait is answered sooner, a long one asks less than half as often.
 */
function pollPauseMs(failedChecks: number): number {
  return Math.min(POLL_MAX_MS, Math.round(POLL_FIRST_MS * 1.5 ** failedChecks));
}

/** Polls until check() returns true, or fails after timeoutMs. */
export async function eventually(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let failed = 0; ; failed++) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, pollPauseMs(failed)));
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
