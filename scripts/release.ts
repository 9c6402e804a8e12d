/**
 * `npm run release`: the klutch provider plugin as Pulumi installs plugins, in dist/.
 *
 *   dist/pulumi-resource-klutch-v<version>-linux-amd64.tar.gz
 *   dist/SHA256SUMS
 *
 * Install it with `pulumi plugin install resource klutch <version> --file <archive>`. The archive
 * holds the provider bundled into one file with everything it loads (esbuild, from
 * provider/main.ts) and the `pulumi-resource-klutch` launcher, which runs it on the Node.js on
 * PATH, as Pulumi's own Node.js language host does. Node is not shipped (about 100 MB per plugin
 * and per platform); the launcher checks its version and says what is missing.
 *
 * Reproducible: the same commit gives the same bytes. The bundle is esbuild's deterministic
 * output; the archive's entries are in a fixed order with the commit's time, owner 0 and fixed
 * modes; gzip writes no name and no time.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import * as zlib from "node:zlib";
import { Command } from "commander";
import { build, type Metafile } from "esbuild";
import * as tar from "tar-stream";
import { repoRoot } from "../automation/toolchain";

/** The Node.js major the bundle is built for and tested on (package.json engines). */
const NODE_MAJOR = 24;

const LAUNCHER = `#!/bin/sh
# The klutch resource plugin: the provider bundled in provider.js, run by the Node.js on PATH.
here=$(cd "$(dirname "$0")" && pwd) || exit 1
if ! major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null); then
  echo "pulumi-resource-klutch: Node.js ${NODE_MAJOR} or later must be on PATH; none was found" >&2
  exit 1
fi
if [ "$major" -lt ${NODE_MAJOR} ]; then
  echo "pulumi-resource-klutch: needs Node.js ${NODE_MAJOR} or later on PATH; found $(node --version)" >&2
  exit 1
fi
exec node "$here/provider.js" "$@"
`;

export interface ReleaseResult {
  archive: string;
  sha256: string;
  /** Bytes of the bundle per npm package (and "project" for this repository's code), largest first. */
  packages: [string, number][];
}

/** Bytes in the bundle per package, from esbuild's metafile. */
function bundledPackages(meta: Metafile): [string, number][] {
  const sizes = new Map<string, number>();
  for (const output of Object.values(meta.outputs))
    for (const [file, input] of Object.entries(output.inputs)) {
      const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file)?.[1] ?? "project";
      sizes.set(pkg, (sizes.get(pkg) ?? 0) + input.bytesInOutput);
    }
  return [...sizes].sort((a, b) => b[1] - a[1]);
}

/** The commit's time in seconds (SOURCE_DATE_EPOCH wins, as reproducible builds agree). */
function sourceDate(root: string): number {
  const fromEnv = Number(process.env.SOURCE_DATE_EPOCH);
  if (Number.isInteger(fromEnv) && fromEnv > 0) return fromEnv;
  return Number(execFileSync("git", ["log", "-1", "--format=%ct"], { cwd: root, encoding: "utf8" }).trim());
}

async function tarGz(entries: { name: string; mode: number; body: Buffer }[], mtime: Date): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on("data", (c: Buffer) => chunks.push(c));
  const done = new Promise<void>((resolve, reject) => {
    pack.on("end", resolve);
    pack.on("error", reject);
  });
  for (const e of [...entries].sort((a, b) => a.name.localeCompare(b.name)))
    pack.entry({ name: e.name, mode: e.mode, mtime, uid: 0, gid: 0, uname: "", gname: "" }, e.body);
  pack.finalize();
  await done;
  // Node's gzip header carries no file name and a zero time: the same input, the same bytes.
  return zlib.gzipSync(Buffer.concat(chunks), { level: 9 });
}

export async function release(opts: {
  root: string;
  outDir: string;
  log: (m: string) => void;
}): Promise<ReleaseResult> {
  const { version } = JSON.parse(fs.readFileSync(path.join(opts.root, "package.json"), "utf8")) as {
    version: string;
  };
  const bundled = await build({
    entryPoints: [path.join(opts.root, "provider", "main.ts")],
    bundle: true,
    platform: "node",
    target: `node${NODE_MAJOR}`,
    format: "cjs",
    write: false,
    outfile: "provider.js",
    metafile: true,
    logLevel: "error",
    legalComments: "inline",
    // Nothing is left external: @pulumi/pulumi loads TypeScript at start-up through its
    // typescript-shim (provider/experimental/analyzer.js), so it is bundled too.
  });
  const [bundle] = bundled.outputFiles;
  if (!bundle) throw new Error("esbuild wrote no bundle");
  const name = `pulumi-resource-klutch-v${version}-linux-amd64.tar.gz`;
  const archive = await tarGz(
    [
      { name: "pulumi-resource-klutch", mode: 0o755, body: Buffer.from(LAUNCHER) },
      { name: "provider.js", mode: 0o644, body: Buffer.from(bundle.contents) },
    ],
    new Date(sourceDate(opts.root) * 1000),
  );
  fs.mkdirSync(opts.outDir, { recursive: true });
  const file = path.join(opts.outDir, name);
  fs.writeFileSync(file, archive);
  const sha256 = createHash("sha256").update(archive).digest("hex");
  fs.writeFileSync(path.join(opts.outDir, "SHA256SUMS"), `${sha256}  ${name}\n`);
  const packages = bundledPackages(bundled.metafile);
  opts.log(
    `${name}: ${(archive.length / 2 ** 20).toFixed(1)} MiB (bundle ${(bundle.contents.length / 2 ** 20).toFixed(1)} MiB), sha256 ${sha256}`,
  );
  opts.log(
    `largest in the bundle: ${packages
      .slice(0, 10)
      .map(([p, n]) => `${p} ${(n / 2 ** 20).toFixed(2)} MiB`)
      .join(", ")}`,
  );
  return { archive: file, sha256, packages };
}

if (require.main === module) {
  const program = new Command("release")
    .description("Write the klutch provider plugin's release archive and SHA256SUMS to dist/")
    .option("--out <dir>", "where to write them", path.join(repoRoot, "dist"))
    .action(async (o: { out: string }) => {
      await release({
        root: repoRoot,
        outDir: path.resolve(o.out),
        log: (m) => console.log(`[release] ${m}`),
      });
    });
  program.parseAsync(process.argv).catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  });
}
