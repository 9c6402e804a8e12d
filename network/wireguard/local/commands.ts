import { spawnSync } from "node:child_process";

/**
 * Running commands for the local WireGuard runtime (`ip`, `wg`, `nft`).
 *
 * Every file of this runtime that a provider calls into imports only Node's built-in modules:
 * Pulumi serialises a dynamic provider with what it closes over (`serializeFunction(() =>
 * provider)` in @pulumi/pulumi dynamic/index.ts), copying this project's functions by value and
 * turning a built-in module into `require("<name>")`, so the serialised provider runs in the
 * engine's provider process without this project's files (commands.test.ts checks the text).
 */

export interface CommandOptions {
  /** Written to the command's stdin. */
  input?: string;
  /** Return the output of a command that fails instead of throwing. */
  allowFail?: boolean;
}

/**
 * The environment of every command and daemon: PATH alone, so no secret of the engine's
 * environment reaches them, and the daemons are not taken for the engine's leftovers
 * (programs/bridge/orphans.ts finds those by their environment).
 */
export function childEnvironment(): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? "/usr/sbin:/usr/bin:/sbin:/bin" };
}

/** Runs argv and returns its stdout; throws with its stderr unless `allowFail`. */
export function sh(argv: string[], opts: CommandOptions = {}): string {
  const [command = "", ...args] = argv;
  const r = spawnSync(command, args, {
    input: opts.input,
    encoding: "utf8",
    timeout: 20000,
    env: childEnvironment(),
  });
  if (r.status !== 0 && !opts.allowFail) {
    throw new Error(`${argv.join(" ")} exited ${r.status ?? r.signal}: ${(r.stderr ?? "").trim()}`);
  }
  return r.stdout ?? "";
}

/** The same inside a network namespace (`ip netns exec`). */
export function inNs(ns: string, argv: string[], opts?: CommandOptions): string {
  return sh(["ip", "netns", "exec", ns, ...argv], opts);
}
