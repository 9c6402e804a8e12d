// `npm run pulumi -- <up|preview|destroy|refresh|outputs> [--stack local]`
//
// Runs this project's program on the real Pulumi CLI built by the toolchain, with the
// project's file backend and plugin home. See lib/pulumi-runner.ts for why the program
// runs through the Automation API.
import { Command } from "commander";
import { selectStack } from "../lib/pulumi-runner";

const out = (text: string) => process.stdout.write(text);

async function main(): Promise<void> {
  const program = new Command("pulumi")
    .description("Run the Klutch Pulumi program on the real Pulumi engine")
    .option("-s, --stack <name>", "stack to operate on (stacks/Pulumi.<name>.yaml)", "local");

  program
    .command("up")
    .description("create or update the environment")
    .action(async () => {
      const stack = await selectStack({ stack: program.opts<{ stack: string }>().stack });
      const res = await stack.up({ onOutput: out });
      out(`\nupdate ${res.summary.result}: ${JSON.stringify(res.summary.resourceChanges ?? {})}\n`);
    });

  program
    .command("preview")
    .description("show what `up` would change")
    .option("--expect-no-changes", "fail if the preview shows any change")
    .option("--diff", "show the property-level diff")
    .action(async (opts: { expectNoChanges?: boolean; diff?: boolean }) => {
      const stack = await selectStack({ stack: program.opts<{ stack: string }>().stack });
      const res = await stack.preview({
        onOutput: out,
        expectNoChanges: opts.expectNoChanges,
        diff: opts.diff,
      });
      out(`\npreview: ${JSON.stringify(res.changeSummary)}\n`);
    });

  program
    .command("destroy")
    .description("delete every resource of the stack")
    .action(async () => {
      const stack = await selectStack({ stack: program.opts<{ stack: string }>().stack });
      const res = await stack.destroy({ onOutput: out });
      out(`\ndestroy ${res.summary.result}: ${JSON.stringify(res.summary.resourceChanges ?? {})}\n`);
    });

  program
    .command("refresh")
    .description("read the real state of every resource into the stack")
    .action(async () => {
      const stack = await selectStack({ stack: program.opts<{ stack: string }>().stack });
      await stack.refresh({ onOutput: out });
    });

  program
    .command("outputs")
    .description("print the stack outputs (secrets stay masked)")
    .action(async () => {
      const stack = await selectStack({ stack: program.opts<{ stack: string }>().stack });
      const outputs = await stack.outputs();
      const shown = Object.fromEntries(
        Object.entries(outputs).map(([k, v]) => [k, v.secret ? "[secret]" : (v.value as unknown)]),
      );
      out(`${JSON.stringify(shown, null, 2)}\n`);
    });

  await program.parseAsync(process.argv);
}

main().catch((err: unknown) => {
  // The engine's own output has already been streamed; print only the cause.
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`\n${message}\n`);
  process.exit(1);
});
