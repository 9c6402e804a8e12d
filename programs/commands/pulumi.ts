// `npm run pulumi -- [--stack local] <up|preview|destroy|refresh|outputs|config> [flags]`
//
// Runs this project's program on the real Pulumi CLI built by the toolchain, with the
// project's file backend and plugin home. See programs/stack/program-stack.ts for why the program
// runs through the Automation API. It behaves like the `pulumi` command operators know:
// `up` and `destroy` show what they will do and ask first (`--yes` skips the question; without
// a terminal to ask on, they refuse), and the common flags mean what they mean there.
import * as fs from "node:fs";
import * as path from "node:path";
import * as readline from "node:readline/promises";
import type { Stack } from "@pulumi/pulumi/automation";
import { Command, Option } from "commander";
import { StackCli } from "../../host/automation/stack-cli";
import { policyPackHost } from "../../host/automation/policy-host";
import { failureText } from "../../host/automation/command-failure";
import { renderIssues } from "../../lib/config/messages";

// The config check and the wait for terminating objects load the program's configuration
// schema and a Kubernetes client (about 1.5 s of imports); they are loaded where `up` and
// `preview` need them, so `config`, `outputs` and the other commands start without them.
// require, not import(): an import() stays Node.js's own ES module loader, which finds no
// extensionless .ts file (host/scripts/register-typescript.cjs).
type TerminatingObjects = typeof import("../../host/automation/terminating-objects");
const awaitTerminating: TerminatingObjects["awaitTerminating"] = (...args) => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const m = require("../../host/automation/terminating-objects") as TerminatingObjects;
  return m.awaitTerminating(...args);
};

const out = (text: string) => process.stdout.write(text);

interface ChangeFlags {
  yes?: boolean;
  diff?: boolean;
  refresh?: boolean;
  target?: string[];
  targetDependents?: boolean;
  policyPack?: string[];
}

const collect = (value: string, prior: string[] = []) => [...prior, value];

/** The flags `up`, `preview` and `destroy` share with the Pulumi CLI. */
function changeOptions(cmd: Command, what: string): Command {
  return cmd
    .option("--diff", "show the property-level diff")
    .option("--refresh", "read the real state of every resource first")
    .option("-t, --target <urn>", `only ${what} this resource (repeatable)`, collect)
    .option("--target-dependents", "also the resources that depend on the targets")
    .option(
      "--policy-pack <dir>",
      "run this policy pack (e.g. `policy`) over every resource; a mandatory violation fails (repeatable)",
      collect,
    );
}

/**
 * The policy packs as the engine is given them: each directory's launcher, since the toolchain's
 * CLI cannot start a pack directory (host/automation/policy-host.ts). A wrong path is refused
 * here at once; the engine would report it only after running the program.
 */
function policyPacks(dirs: string[] | undefined): string[] | undefined {
  if (!dirs) return undefined;
  return dirs.map((dir) => {
    const abs = path.resolve(dir);
    if (!fs.existsSync(path.join(abs, "PulumiPolicy.yaml"))) {
      throw new Error(
        `--policy-pack ${dir}: ${abs} has no PulumiPolicy.yaml; give a policy pack directory, e.g. --policy-pack programs/policy`,
      );
    }
    return policyPackHost(abs);
  });
}

/**
 * Asks before a change, as `pulumi up` does. Without a terminal there is nobody to ask, so the
 * change is refused rather than applied silently; `--yes` is the explicit consent.
 */
async function confirmed(question: string, flags: ChangeFlags): Promise<boolean> {
  if (flags.yes) return true;
  if (!process.stdin.isTTY) {
    process.stderr.write(
      `\nNot applied: there is no terminal to confirm on. Review the preview above and run again with --yes.\n`,
    );
    return false;
  }
  const rl = readline.createInterface({ input: process.stdin, output: process.stdout });
  const answer = await rl.question(`\n${question} [y/N] `);
  rl.close();
  return /^y(es)?$/i.test(answer.trim());
}

/**
 * The stack for the commands that run the program, through the Automation API. It is loaded
 * here, not at the top: `config`, `outputs` and `--help` do without its 1.3 s of imports.
 */
async function stackFor(program: Command): Promise<Stack> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { selectStack } = require("../stack/program-stack") as typeof import("../stack/program-stack");
  return selectStack({ stack: program.opts<{ stack: string }>().stack });
}

/** The stack for the commands that run no program: straight to the CLI (host/automation/stack-cli.ts). */
const cliFor = (program: Command) => new StackCli(program.opts<{ stack: string }>().stack);

/**
 * The program's own configuration check, run before the engine starts: a bad setting is then
 * reported once, quickly, and no engine run begins. (Through the engine the same message came
 * out twice: the inline program's RunError is logged by the SDK's rejection handler and
 * returned to the engine as the run's error. A plain `pulumi up` still gets it from the program.)
 */
async function checkConfig(stack: Stack): Promise<void> {
  const all = await stack.getAllConfig();
  const values = Object.fromEntries(Object.entries(all).map(([key, v]) => [key, v.value]));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { validateStackConfig } = require("../stack/stack-config") as typeof import("../stack/stack-config");
  const { result } = validateStackConfig(values);
  if (!result.ok) throw new Error(renderIssues(result.issues, stack.name));
}

async function main(): Promise<void> {
  const program = new Command("pulumi")
    .description("Run the Klutch Pulumi program on the real Pulumi engine")
    .option("-s, --stack <name>", "stack to operate on (stacks/Pulumi.<name>.yaml)", "local");

  changeOptions(
    program
      .command("up")
      .description("preview, confirm, then create or update the environment")
      .option("-y, --yes", "apply without asking (after showing the preview)"),
    "update",
  ).action(async (flags: ChangeFlags) => {
    const packs = policyPacks(flags.policyPack);
    const stack = await stackFor(program);
    await checkConfig(stack);
    // Objects left being deleted (a destroy cut short, a hand-made delete) are waited for and
    // then re-read, so the update creates them again instead of calling them "same".
    const reread = await awaitTerminating(stack, out);
    const common = {
      diff: flags.diff,
      refresh: flags.refresh || reread,
      target: flags.target,
      targetDependents: flags.targetDependents,
      policyPacks: packs,
    };
    const preview = await stack.preview({ ...common, onOutput: out });
    // A read (`Service.get` of an object Pulumi does not manage) looks the object up on every
    // run and changes nothing.
    const changes = Object.entries(preview.changeSummary).filter(
      ([op, n]) => op !== "same" && op !== "read" && (n ?? 0) > 0,
    );
    if (changes.length === 0) {
      out("\nNo changes: nothing to apply.\n");
      return;
    }
    if (!(await confirmed("Do you want to perform this update?", flags))) {
      process.exitCode = 1;
      return;
    }
    const res = await stack.up({ ...common, onOutput: out });
    out(`\nupdate ${res.summary.result}: ${JSON.stringify(res.summary.resourceChanges ?? {})}\n`);
  });

  changeOptions(
    program
      .command("preview")
      .description("show what `up` would change")
      .option("--expect-no-changes", "fail if the preview shows any change"),
    "preview",
  ).action(async (flags: ChangeFlags & { expectNoChanges?: boolean }) => {
    const packs = policyPacks(flags.policyPack);
    const stack = await stackFor(program);
    await checkConfig(stack);
    const reread = await awaitTerminating(stack, out);
    const res = await stack.preview({
      onOutput: out,
      expectNoChanges: flags.expectNoChanges,
      diff: flags.diff,
      refresh: flags.refresh || reread,
      target: flags.target,
      targetDependents: flags.targetDependents,
      policyPacks: packs,
    });
    out(`\npreview: ${JSON.stringify(res.changeSummary)}\n`);
  });

  program
    .command("destroy")
    .description("preview, confirm, then delete every resource of the stack")
    .option("-y, --yes", "delete without asking (after showing the preview)")
    .option("--refresh", "read the real state of every resource first")
    .option("-t, --target <urn>", "only destroy this resource (repeatable)", collect)
    .option("--target-dependents", "also the resources that depend on the targets")
    .action(async (flags: ChangeFlags) => {
      const stack = await stackFor(program);
      const common = {
        refresh: flags.refresh,
        target: flags.target,
        targetDependents: flags.targetDependents,
      };
      await stack.destroy({ ...common, previewOnly: true, onOutput: out });
      if (!(await confirmed("Do you want to delete these resources?", flags))) {
        process.exitCode = 1;
        return;
      }
      const res = await stack.destroy({ ...common, onOutput: out }).catch(async (err: unknown) => {
        process.stderr.write(`\n${await leftInState(stack)}\n`);
        throw err;
      });
      out(`\ndestroy ${res.summary.result}: ${JSON.stringify(res.summary.resourceChanges ?? {})}\n`);
    });

  program
    .command("refresh")
    .description("read the real state of every resource into the stack")
    .action(async () => {
      const stack = await stackFor(program);
      await stack.refresh({ onOutput: out });
    });

  program
    .command("outputs")
    .description("print the stack outputs (secrets masked unless --show-secrets)")
    .option("--show-secrets", "print secret outputs in plain text")
    .addOption(new Option("-j, --json", "print JSON (the default; kept for the Pulumi CLI's flag)"))
    .action((flags: { showSecrets?: boolean }) => {
      out(`${JSON.stringify(cliFor(program).outputs(!!flags.showSecrets), null, 2)}\n`);
    });

  const config = program.command("config").description("read and change the stack's configuration");
  config
    .command("get <key>")
    .description("print one setting (klutch:… or another namespace)")
    .option("--path", "the key is a path into a structured value, e.g. klutch:bind.replicas")
    .action((key: string, flags: { path?: boolean }) => {
      out(`${cliFor(program).getConfig(key, flags.path)}\n`);
    });
  config
    .command("set <key> [value]")
    .description(
      "set one setting in stacks/Pulumi.<stack>.yaml; without a value it is read from stdin, so a secret never shows in npm's echo of the command or in the shell history",
    )
    .option("--secret", "encrypt the value with the stack's secrets provider")
    .option("--path", "the key is a path into a structured value")
    .action(async (key: string, given: string | undefined, flags: { secret?: boolean; path?: boolean }) => {
      const value = given ?? (await readStdin()).replace(/\r?\n$/, "");
      if (value === "") throw new Error(`no value for ${key}: give it after the key or on stdin`);
      cliFor(program).setConfig(key, value, flags);
    });
  config
    .command("rm <key>")
    .description("remove one setting")
    .option("--path", "the key is a path into a structured value")
    .action((key: string, flags: { path?: boolean }) => {
      cliFor(program).removeConfig(key, flags.path);
    });
  config
    .command("list", { isDefault: true })
    .description("print every setting (secrets masked unless --show-secrets)")
    .option("--show-secrets", "print secret settings in plain text")
    .action((flags: { showSecrets?: boolean }) => {
      const all = cliFor(program).allConfig(!!flags.showSecrets);
      for (const [key, v] of Object.entries(all).sort(([a], [b]) => a.localeCompare(b))) {
        out(`${key}: ${v.secret && !flags.showSecrets ? "[secret]" : (v.value ?? "")}\n`);
      }
    });

  await program.parseAsync(process.argv);
}

/** After a failed destroy: how much of the stack is still in its state, by type. */
async function leftInState(stack: Stack): Promise<string> {
  const resources =
    ((await stack.exportStack()).deployment as { resources?: { type: string }[] }).resources ?? [];
  const byType = new Map<string, number>();
  for (const r of resources)
    if (!r.type.startsWith("pulumi:")) byType.set(r.type, (byType.get(r.type) ?? 0) + 1);
  const total = [...byType.values()].reduce((a, b) => a + b, 0);
  const top = [...byType]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 6)
    .map(([type, n]) => `${n} ${type}`)
    .join(", ");
  return `The destroy stopped: ${total} resources are still in stack "${stack.name}" and on their clusters (${top}${byType.size > 6 ? ", …" : ""}). Running the destroy again resumes from here.`;
}

/** Everything on stdin (nothing when it is a terminal: the value must then be given). */
async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) return "";
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

main().catch((err: unknown) => {
  process.stderr.write(`\n${failureText(err)}\n`);
  process.exit(1);
});
