import { strict as assert } from "node:assert";
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { ensureKubernetesPlugin, preparePulumiHome } from "../../host/automation/pulumi-runner";
import { repoRoot, toolchainEnv } from "../../host/automation/toolchain";

export interface Ran {
  status: number | null;
  out: string;
}

/**
 * A Pulumi YAML program of examples/ run through the real engine with the klutch provider
 * plugin, on a stack and state of its own (`work`), so parallel runs never share a stack file,
 * a state directory or a plugin cache.
 */
export class YamlProgram {
  public readonly dir: string;
  public readonly stack: string;
  public readonly stackFile: string;
  private readonly env: NodeJS.ProcessEnv;

  constructor(
    example: string,
    private readonly work: string,
  ) {
    this.dir = path.join(repoRoot, "examples", example);
    this.stack = `e2e-${path
      .basename(work)
      .replace(/[^a-z0-9]/gi, "")
      .slice(-8)
      .toLowerCase()}`;
    this.stackFile = path.join(this.dir, `Pulumi.${this.stack}.yaml`);
    this.env = {
      ...toolchainEnv(),
      PULUMI_BACKEND_URL: `file://${path.join(work, "state")}`,
      PULUMI_HOME: path.join(work, "home"),
      PULUMI_CONFIG_PASSPHRASE: "provider-e2e",
      PULUMI_SKIP_UPDATE_CHECK: "true",
      PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
      PULUMI_IGNORE_AMBIENT_PLUGINS: "true",
    };
  }

  /** Builds what the YAML program needs and is missing (a warm cache needs no build lock); makes the stack. */
  prepare(): void {
    const toolchain = path.join(repoRoot, "host", "scripts", "toolchain.sh");
    const status = execFileSync("bash", [toolchain, "status"], { encoding: "utf8" });
    for (const [part, entry] of [
      ["pulumi", "/pulumi-3"],
      ["pulumi-kubernetes", "/pulumi-resource-kubernetes-"],
      ["pulumi-yaml", "/pulumi-language-yaml-"],
    ] as const) {
      if (status.split("\n").some((l) => l.includes(entry) && /missing$/.test(l.trim())))
        execFileSync("bash", [toolchain, "build", part], { stdio: "inherit" });
    }
    fs.mkdirSync(path.join(this.work, "state"), { recursive: true });
    preparePulumiHome(this.env);
    ensureKubernetesPlugin(this.env);
    this.ok(["stack", "init"]);
  }

  run(args: string[]): Ran {
    const r = spawnSync("pulumi", [...args, "--stack", this.stack, "--non-interactive", "--color", "never"], {
      cwd: this.dir,
      env: this.env,
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
    });
    return { status: r.status, out: `${r.stdout}\n${r.stderr}` };
  }

  ok(args: string[]): string {
    const r = this.run(args);
    assert.equal(r.status, 0, r.out);
    return r.out;
  }

  config(key: string, value: string): string {
    return this.ok(["config", "set", key, value]);
  }

  /** The stack's outputs (`[secret]` for secrets), without the engine's warnings. */
  outputs(): Record<string, unknown> {
    return JSON.parse(
      this.ok(["stack", "output", "--json"])
        .trim()
        .split("\n")
        .filter((l) => !/warn/i.test(l))
        .join("\n"),
    ) as Record<string, unknown>;
  }

  /** URNs in the stack's state, sorted. */
  resources(): string[] {
    return (
      JSON.parse(this.ok(["stack", "export"])) as { deployment: { resources: { urn: string }[] } }
    ).deployment.resources
      .map((x) => x.urn)
      .sort();
  }

  /** Whatever a failed test left: destroy, and the stack file goes. */
  cleanUp(): void {
    if (fs.existsSync(this.stackFile)) this.run(["destroy", "--yes", "--skip-preview"]);
    fs.rmSync(this.stackFile, { force: true });
  }
}
