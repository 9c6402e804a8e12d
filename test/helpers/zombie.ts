import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import * as fs from "node:fs";

/**
 * Runs `use` with the pid of a real zombie and of its live parent: the child exits once its
 * parent is `sleep 30` (the shell exec'd it), which never waits for children, so the exited one
 * stays a zombie, as a killed process does under an init that is slow to reap (this machine's
 * PID 1 is no init). The child waits for the exec: one that exited before it (a bare `sleep 0`)
 * was sometimes reaped by the shell itself, and the test then found no process at all (seen
 * about once in ten unit runs: ENOENT on /proc/<pid>/stat).
 */
export async function withZombie(
  use: (zombie: number, parent: number) => void | Promise<void>,
): Promise<void> {
  const child = 'while [ "$(cat /proc/$PPID/comm)" != sleep ]; do sleep 0.01; done';
  const parent = spawn("sh", ["-c", `sh -c '${child}' & echo $!; exec sleep 30`], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  try {
    const zombie = Number(
      await new Promise<string>((resolve) =>
        parent.stdout.once("data", (b: Buffer) => resolve(b.toString())),
      ),
    );
    for (let i = 0; i < 100 && !/ Z /.test(fs.readFileSync(`/proc/${zombie}/stat`, "utf8")); i++)
      await new Promise((r) => setTimeout(r, 50));
    assert.match(
      fs.readFileSync(`/proc/${zombie}/stat`, "utf8"),
      / Z /,
      `process ${zombie} is no zombie after 5 s`,
    );
    await use(zombie, parent.pid!);
  } finally {
    parent.kill("SIGKILL");
  }
}
