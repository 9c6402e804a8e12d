/**
 * Where the test command's CPU goes (not a test: it asserts nothing). Runs `host/scripts/test.sh`
 * (all of `npm test`, or the spec files given) under Linux process accounting and reports the
 * CPU-seconds by kind of process, the commands that took most, the cores busy minute by minute,
 * and the floor that sets: the run's CPU-seconds on all the machine's cores with none idle. This
 * is how the CI-time figures in docs/tests.md were measured.
 *
 *   npm run bench:ci-cpu                                   # the whole of npm test (about 40 min here)
 *   npm run bench:ci-cpu -- test/e2e/node.test.ts          # one spec file
 *   npm run bench:ci-cpu -- --from /tmp/run.acct           # report on an earlier run's records
 *
 * Process accounting is the kernel's and counts the whole machine while it is on: keep the
 * machine otherwise idle. It needs root and Debian's acct (accton, dump-acct), which this installs
 * when missing. It turns accounting off at the end, the machine's own (acct's service), if any, too.
 */
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Command } from "commander";
import { linkParents, parseDumpAcct } from "../../lib/ci-cpu/accounting";
import { cpuReport, renderCpuReport } from "../../lib/ci-cpu/report";
import { repoRoot } from "../../host/automation/toolchain";

// accton lives in /usr/sbin, which a non-login shell's PATH may lack.
const env = { ...process.env, PATH: `${process.env.PATH ?? ""}:/usr/sbin:/sbin` };
const has = (tool: string) => spawnSync("bash", ["-c", `command -v ${tool}`], { env }).status === 0;

/** Debian's acct, installed when accton or dump-acct is missing. */
function ensureAcct(): void {
  if (has("accton") && has("dump-acct")) return;
  process.stderr.write("[ci-cpu] installing Debian's acct (accton, dump-acct)\n");
  const apt = (args: string[]) =>
    execFileSync("apt-get", args, {
      env: { ...env, DEBIAN_FRONTEND: "noninteractive" },
      stdio: ["ignore", "inherit", "inherit"],
    });
  // A fresh machine has no package lists yet (host/scripts/setup.sh updates them the same way).
  apt(["update", "-qq"]);
  apt(["install", "-y", "-qq", "--no-install-recommends", "acct"]);
}

/** Runs the test command with accounting on into `file`; returns its exit status. */
function accountedTestRun(file: string, specs: string[]): number {
  fs.writeFileSync(file, "");
  execFileSync("accton", [file], { env, stdio: ["ignore", "ignore", "inherit"] });
  // Off again however this process ends, so the kernel never writes on into a forgotten file.
  const off = () => spawnSync("accton", ["off"], { env, stdio: "ignore" });
  const onSignal = (signal: NodeJS.Signals) => {
    off();
    process.kill(process.pid, signal);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    process.stderr.write(
      `[ci-cpu] process accounting on, into ${file}; running host/scripts/test.sh ${specs.join(" ")}\n`,
    );
    const run = spawnSync("bash", [path.join(repoRoot, "host", "scripts", "test.sh"), ...specs], {
      cwd: repoRoot,
      stdio: "inherit",
    });
    return run.status ?? 1;
  } finally {
    off();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

function main(): void {
  const program = new Command()
    .argument("[specs...]", "spec files for host/scripts/test.sh (none: the whole test command)")
    .option("--from <file>", "report on an accounting file of an earlier run instead of running the tests")
    .option("--out <file>", "also write the report (Markdown) to this file")
    .option(
      "--cores <n>",
      "the machine's cores, for the floor and the bars",
      String(os.availableParallelism()),
    )
    .option("--top <n>", "how many commands to list", "15")
    .parse();
  const opts = program.opts<{ from?: string; out?: string; cores: string; top: string }>();
  const specs = program.args;
  if (!opts.from && process.getuid?.() !== 0) {
    throw new Error(
      "process accounting (accton) needs root: run this as root, or report on a file with --from",
    );
  }
  ensureAcct();
  let status = 0;
  let file = opts.from;
  if (!file) {
    file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "klutch-ci-cpu-")), "run.acct");
    status = accountedTestRun(file, specs);
  }
  const text = execFileSync("dump-acct", [file], { env, encoding: "utf8", maxBuffer: 1 << 30 });
  const report = renderCpuReport(
    cpuReport(linkParents(parseDumpAcct(text)), { cores: Number(opts.cores), top: Number(opts.top) }),
  );
  process.stdout.write(`\n${report}`);
  if (opts.out) fs.writeFileSync(opts.out, report);
  process.stderr.write(`[ci-cpu] the records stay in ${file} (--from ${file} reports on them again)\n`);
  process.exitCode = status;
}

main();
