/**
 * Benchmark of what loading the program costs a process (not a test: it asserts nothing). Each
 * `npm run pulumi`, engine run of index.ts and bridge loads it first. In turn, `--runs` times each:
 *
 * - the program: `node --require host/scripts/register-typescript.cjs -e "require('./programs/stack/program.ts')"`;
 * - the baseline: plain Node.js loading only the packages the program loaded, by their entry
 *   points, which any way of running the program must load too.
 *
 * It prints the median CPU seconds (user + system, from the kernel's accounting of each child) and
 * their ratio: what the project's own TypeScript and the loader add on top of its dependencies.
 *
 *   npm run bench:loader -- --runs 10
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { Command } from "commander";
import { NODE_TYPESCRIPT_ARGS, repoRoot } from "../../host/automation/toolchain";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/** CPU seconds (user + system) of one `node` child, as /usr/bin/time reads them from wait4. */
function cpuSeconds(args: string[]): number {
  const r = spawnSync("/usr/bin/time", ["-f", "%U %S", process.execPath, ...args], {
    cwd: repoRoot,
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error(`node ${args.join(" ")} failed:\n${r.stderr}`);
  const [user, sys] = (r.stderr.trim().split("\n").pop() ?? "").split(" ").map(Number);
  return (user ?? NaN) + (sys ?? NaN);
}

/** The packages the program loads, as `require` specifiers (their names). */
function programPackages(): string[] {
  const script = [
    "require('./programs/stack/program.ts');",
    "const names = new Set();",
    "for (const f of Object.keys(require.cache)) {",
    "  const m = /\\/node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//.exec(f);",
    "  if (m && !f.slice(m.index + m[0].length).includes('node_modules/')) names.add(m[1]);",
    "}",
    "process.stdout.write(JSON.stringify([...names]));",
  ].join("\n");
  const r = spawnSync(process.execPath, [...NODE_TYPESCRIPT_ARGS, "-e", script], {
    cwd: repoRoot,
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error(`listing the program's packages failed:\n${r.stderr}`);
  // Only those the project names itself: their own dependencies load through them.
  const pkg = JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8")) as {
    dependencies: Record<string, string>;
  };
  return (JSON.parse(r.stdout) as string[]).filter((n) => n in pkg.dependencies);
}

function main(): void {
  const opts = new Command().option("--runs <n>", "loads per variant", "10").parse().opts<{ runs: string }>();
  const runs = Number(opts.runs);
  const packages = programPackages();
  const program = [...NODE_TYPESCRIPT_ARGS, "-e", "require('./programs/stack/program.ts')"];
  const baseline = ["-e", packages.map((p) => `require(${JSON.stringify(p)});`).join("")];
  const a: number[] = [];
  const b: number[] = [];
  cpuSeconds(program); // warm-up: the compile cache and the page cache
  cpuSeconds(baseline);
  for (let i = 0; i < runs; i++) {
    a.push(cpuSeconds(program));
    b.push(cpuSeconds(baseline));
  }
  console.log(`packages of the baseline: ${packages.join(", ")}`);
  console.log(`program through the loader: median ${median(a).toFixed(2)} CPU-s (${runs} runs)`);
  console.log(`its packages alone:        median ${median(b).toFixed(2)} CPU-s`);
  console.log(`ratio: ${(median(a) / median(b)).toFixed(2)}`);
}

main();
