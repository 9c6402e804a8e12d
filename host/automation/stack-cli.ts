import { spawnSync } from "node:child_process";
import { preparePulumiHome, pulumiEnv } from "./pulumi-runner";
import { repoRoot } from "./toolchain";

/**
 * The commands that run no program (`config`, `outputs`) go to the real `pulumi` CLI directly.
 * Through the Automation API each paid for loading it (about 1.3 s of imports) and for its
 * own CLI runs (a version check, a stack selection and the command); here it is one stack
 * selection and the command itself, which is what a plain `pulumi config get` costs.
 */
export class StackCli {
  private readonly env: NodeJS.ProcessEnv;
  private readonly workDir: string;
  private selected = false;

  /** base: the environment to start from; workDir: the project (this repository by default). */
  constructor(
    readonly stack: string,
    opts: { base?: NodeJS.ProcessEnv; workDir?: string } = {},
  ) {
    this.env = pulumiEnv(stack, opts.base ?? process.env);
    preparePulumiHome(this.env);
    this.workDir = opts.workDir ?? repoRoot;
  }

  /** `pulumi config get`: the value as the CLI prints it (JSON for objects and arrays). */
  getConfig(key: string, path?: boolean): string {
    return this.run(["config", "get", key, ...(path ? ["--path"] : [])]).replace(/\n$/, "");
  }

  /**
   * Every setting with its value, secrets decrypted only when asked for. A setting declared in
   * Pulumi.yaml but not set in the stack file is listed with its default, or without a value
   * when it has none, as the CLI lists it.
   */
  allConfig(showSecrets: boolean): Record<string, { value?: string; secret: boolean }> {
    const json = this.run(["config", "--json", ...(showSecrets ? ["--show-secrets"] : [])]);
    return JSON.parse(json) as Record<string, { value?: string; secret: boolean }>;
  }

  /**
   * The value goes to the CLI on stdin, never as an argument: a process's arguments can be
   * read by every user of the machine (`ps`), and a secret must not be.
   */
  setConfig(key: string, value: string, flags: { secret?: boolean; path?: boolean }): void {
    this.run(
      ["config", "set", key, flags.secret ? "--secret" : "--plaintext", ...(flags.path ? ["--path"] : [])],
      value,
    );
  }

  removeConfig(key: string, path?: boolean): void {
    this.run(["config", "rm", key, ...(path ? ["--path"] : [])]);
  }

  /** The stack's outputs; a secret one is the string "[secret]" unless showSecrets. */
  outputs(showSecrets: boolean): Record<string, unknown> {
    const json = this.run(["stack", "output", "--json", ...(showSecrets ? ["--show-secrets"] : [])]);
    return JSON.parse(json) as Record<string, unknown>;
  }

  private run(args: string[], input?: string): string {
    // Selected (and created on first use, as the Automation API's createOrSelectStack does), so
    // `config set` works on a stack whose file exists before its first `up`.
    if (!this.selected) {
      this.exec(["stack", "select", "--create", this.stack]);
      this.selected = true;
    }
    return this.exec([...args, "--stack", this.stack], input);
  }

  private exec(args: string[], input?: string): string {
    const r = spawnSync("pulumi", [...args, "--cwd", this.workDir, "--non-interactive"], {
      env: this.env,
      input: input ?? "",
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    });
    if (r.error && "code" in r.error && r.error.code === "ENOENT") {
      throw new Error("pulumi not found: run `bash host/scripts/toolchain.sh build`");
    }
    if (r.error) throw new Error(`pulumi ${args.join(" ")}: ${r.error.message}`);
    if (r.status !== 0) {
      const detail = (r.stderr || r.stdout).trim().replace(/^error: /, "");
      throw new Error(`pulumi ${args[0]} ${args[1] ?? ""}: ${detail}`.replace(/ +:/, ":"));
    }
    return r.stdout;
  }
}
