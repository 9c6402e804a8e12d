/**
 * Benchmark of one engine run as the bridge makes it (not a test: it asserts nothing). A stack
 * of one dynamic resource is updated alternately with the Automation API's `stack.up` (the
 * baseline) and with programs/bridge/engine-run.ts `upFromEvents`, `--runs` times each, in the same
 * process and the same minute, and prints the medians and their ratio.
 *
 *   npm run bench:engine-run -- --runs 10
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { LocalWorkspace } from "@pulumi/pulumi/automation";
import { Command } from "commander";
import { upFromEvents } from "../../programs/bridge/engine-run";
import { toolchainEnv } from "../../host/automation/toolchain";

const provider: pulumi.dynamic.ResourceProvider = {
  create: (inputs: { v: number }) => Promise.resolve({ id: "r", outs: inputs }),
  diff: (_id: string, olds: { v: number }, news: { v: number }) =>
    Promise.resolve({ changes: olds.v !== news.v }),
  update: (_id: string, _olds: unknown, news: { v: number }) => Promise.resolve({ outs: news }),
};

class Counter extends pulumi.dynamic.Resource {
  constructor(name: string, v: number) {
    super(provider, name, { v }, {});
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function main(): Promise<void> {
  const opts = new Command()
    .option("--runs <n>", "updates per variant", "10")
    .parse()
    .opts<{ runs: string }>();
  const runs = Number(opts.runs);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-bench-engine-"));
  fs.mkdirSync(path.join(work, "state"));
  const env = toolchainEnv();
  // The Automation API finds `pulumi` on this process's PATH.
  process.env.PATH = env.PATH;
  let value = 0;
  const stack = await LocalWorkspace.createOrSelectStack(
    {
      stackName: "bench",
      projectName: "bench-engine-run",
      program: () => {
        new Counter("r", value);
        return Promise.resolve({ endpoints: { a: { port: value } } });
      },
    },
    {
      workDir: work,
      envVars: {
        PATH: env.PATH ?? "",
        PULUMI_BACKEND_URL: `file://${path.join(work, "state")}`,
        PULUMI_CONFIG_PASSPHRASE: "bench",
        PULUMI_SKIP_UPDATE_CHECK: "true",
      },
    },
  );
  await stack.up({ color: "never" });
  const times = { "stack.up": [] as number[], upFromEvents: [] as number[] };
  for (let i = 0; i < runs; i++) {
    for (const variant of ["stack.up", "upFromEvents"] as const) {
      value++;
      const t0 = performance.now();
      await (variant === "stack.up" ? stack.up({ color: "never" }) : upFromEvents(stack, { color: "never" }));
      times[variant].push(performance.now() - t0);
      process.stderr.write(
        `run ${i + 1}/${runs} ${variant}: ${(times[variant].at(-1)! / 1000).toFixed(2)} s\n`,
      );
    }
  }
  const base = median(times["stack.up"]);
  const ours = median(times.upFromEvents);
  console.log(
    `load average: ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
  );
  console.log(`stack.up      median ${(base / 1000).toFixed(2)} s (baseline)`);
  console.log(`upFromEvents  median ${(ours / 1000).toFixed(2)} s, ratio ${(ours / base).toFixed(2)}`);
  await stack.destroy({ color: "never" });
  fs.rmSync(work, { recursive: true, force: true });
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
