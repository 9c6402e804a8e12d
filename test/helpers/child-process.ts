import type { ChildProcess } from "node:child_process";

/**
 * Signals a child and resolves once it has exited; at once when there is none or it is gone
 * already (a child killed by a signal has no exit code, only a signal code, and never exits again).
 */
export async function stopChild(
  child: ChildProcess | undefined,
  signal: NodeJS.Signals = "SIGTERM",
): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.kill(signal);
  });
}
