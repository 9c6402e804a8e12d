/**
 * `npm run release`: the klutch provider plugin as Pulumi installs plugins, and the SDKs as their
 * languages' packages, in dist/.
 *
 *   dist/pulumi-resource-klutch-v<version>-linux-amd64.tar.gz   the plugin
 *   dist/klutch-pulumi-<version>.tgz                            the Node.js SDK (npm pack)
 *   dist/pulumi_klutch-<version>-py3-none-any.whl               the Python SDK, wheel
 *   dist/pulumi_klutch-<version>.tar.gz                         the Python SDK, sdist
 *   dist/goproxy/github.com/anynines/klutch-pulumi/sdk/go/@v/v<version>.{zip,mod,info}
 *                                                               the Go SDK as a module proxy serves it
 *   dist/Anynines.Klutch-<version>.tar.gz                       the .NET project as it is (no .NET SDK here to pack it)
 *   dist/klutch-bridge-v<version>-linux-amd64.oci.tar           the bridge image, OCI layout, zstd layer
 *   dist/function-klutch-v<version>.xpkg                        Klutch's composition function, a Crossplane package
 *   dist/IMAGES                                                 the bridge image's reference pinned by digest
 *   dist/SHA256SUMS
 *
 * Install it with `pulumi plugin install resource klutch <version> --file <archive>`. The archive
 * holds the provider bundled into one file with everything it loads (esbuild, from
 * programs/klutch-provider/main.ts) and the `pulumi-resource-klutch` launcher, which runs it on the Node.js on
 * PATH, as Pulumi's own Node.js language host does. Node is not shipped (about 100 MB per plugin
 * and per platform); the launcher checks its version and says what is missing.
 *
 * Reproducible: the same commit gives the same bytes. The bundle is esbuild's deterministic
 * output; the archive's entries are in a fixed order with the commit's time, owner 0 and fixed
 * modes; gzip writes no name and no time. The Python packages are built by setuptools' PEP 517
 * hooks with SOURCE_DATE_EPOCH (which the wheel honours) from sources stamped with the commit's
 * time; the sdist's entries setuptools writes during the build (PKG-INFO, egg-info) carry the
 * build's time, so its tar is rewritten with the commit's time and gzipped as above. npm pack
 * writes fixed times itself. The Go module's zip is golang.org/x/mod/zip's, with no file times.
 * The images' layers are tars with fixed metadata in a fixed order (host/local-clusters/images), and
 * `crossplane xpkg build` stamps no time; both hold this machine's Node.js and Pulumi binaries,
 * so they are reproducible on one machine with one toolchain, not across machines.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as zlib from "node:zlib";
import { Command } from "commander";
import { build, type Metafile } from "esbuild";
import * as tar from "tar-stream";
import { repoRoot, toolchainEnv } from "../../host/automation/toolchain";
import { bridgeSpec } from "../../host/local-clusters/images/bridge-image";
import { imageCacheDir } from "../../host/local-clusters/images/catalog";
import { functionImageSpec } from "../../host/local-clusters/images/function-image";
import {
  buildImage,
  writeReleaseImage,
  type ReleasedImage,
} from "../../host/local-clusters/images/oci-layout";
import { buildXpkg } from "../../host/local-clusters/packages/publish";
import { FUNCTION_PACKAGE } from "../../lib/local/packages";
import { SDK_DIR, sdkFiles } from "../klutch-provider/sdk-files";

/**
 * The oldest Node.js major the bundle is built for (esbuild's target) and runs on: 24, in
 * maintenance until 2028-04-30, so users outside this repository need not move with it; the
 * project itself runs on 26 (docs/versions.md).
 */
const NODE_MAJOR = 24;

export const LAUNCHER = `#!/bin/sh
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

/** Where a published release's bridge image lives (the repository's own container registry). */
export const BRIDGE_IMAGE_REPOSITORY = "ghcr.io/anynines/klutch-pulumi/bridge";

export interface ReleaseResult {
  archive: string;
  sha256: string;
  /** The bridge image's archive in outDir, and its reference and digests (unless `images: false`). */
  bridgeImage?: ReleasedImage & { file: string };
  /** Every file written, by name, with its SHA-256 (what SHA256SUMS lists). */
  files: Record<string, string>;
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

interface Entry {
  name: string;
  mode: number;
  body: Buffer;
  type?: "file" | "directory";
}

async function tarGz(entries: Entry[], mtime: Date): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on("data", (c: Buffer) => chunks.push(c));
  const done = new Promise<void>((resolve, reject) => {
    pack.on("end", resolve);
    pack.on("error", reject);
  });
  for (const e of entries)
    pack.entry(
      { name: e.name, type: e.type ?? "file", mode: e.mode, mtime, uid: 0, gid: 0, uname: "", gname: "" },
      e.type === "directory" ? undefined : e.body,
    );
  pack.finalize();
  await done;
  // Node's gzip header carries no file name and a zero time: the same input, the same bytes.
  return zlib.gzipSync(Buffer.concat(chunks), { level: 9 });
}

/** A .tar.gz's entries, in their order. */
async function entriesOf(archive: Buffer): Promise<Entry[]> {
  const extract = tar.extract();
  const entries: Entry[] = [];
  const done = new Promise<void>((resolve, reject) => {
    extract.on("entry", (header, stream, next) => {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const type = header.type === "directory" ? "directory" : "file";
        if (header.type !== "file" && header.type !== "directory")
          return reject(new Error(`unexpected ${header.type} entry ${header.name}`));
        entries.push({ name: header.name, mode: header.mode ?? 0o644, body: Buffer.concat(chunks), type });
        next();
      });
      stream.resume();
    });
    extract.on("finish", resolve);
    extract.on("error", reject);
  });
  extract.end(zlib.gunzipSync(archive));
  await done;
  return entries;
}

/** Stamps every file and folder under `dir` with `seconds`. */
function stamp(dir: string, seconds: number): void {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) stamp(p, seconds);
    fs.utimesSync(p, seconds, seconds);
  }
}

/**
 * A copy of sdk/<language> with the files git keeps there (sdkFiles): none of a local
 * build's leftovers (bin/, node_modules/, __pycache__) reaches a package.
 */
function copySdk(language: string, to: string): void {
  const from = path.join(SDK_DIR, language);
  for (const rel of sdkFiles(from)) {
    fs.mkdirSync(path.dirname(path.join(to, rel)), { recursive: true });
    fs.copyFileSync(path.join(from, rel), path.join(to, rel));
  }
}

/**
 * The SDKs as their languages' packages, built from copies of sdk/<language>: the
 * Node.js SDK as pulumi-language-nodejs packs one (`npm run build`, package.json into bin/,
 * `npm pack bin`; this repository's node_modules for the build), the Python SDK through
 * setuptools' PEP 517 hooks in the toolchain's Python (the one the Python SDK is tested with).
 */
async function sdkPackages(outDir: string, seconds: number, env: NodeJS.ProcessEnv): Promise<string[]> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-release-"));
  try {
    const node = path.join(work, "nodejs");
    copySdk("nodejs", node);
    fs.symlinkSync(path.join(repoRoot, "node_modules"), path.join(node, "node_modules"));
    execFileSync("npm", ["run", "build", "--silent"], { cwd: node, env, stdio: "pipe" });
    fs.copyFileSync(path.join(node, "package.json"), path.join(node, "bin", "package.json"));
    const tgz = execFileSync(
      "npm",
      ["pack", path.join(node, "bin"), "--pack-destination", outDir, "--silent"],
      {
        cwd: work,
        env,
        encoding: "utf8",
      },
    ).trim();

    const python = env.KLUTCH_PULUMI_PYTHON;
    if (!python) throw new Error("the toolchain names no Python (KLUTCH_PULUMI_PYTHON)");
    // The Python the SDK is tested with, built once into the toolchain's cache.
    if (!fs.existsSync(python))
      execFileSync("bash", [path.join(repoRoot, "host", "scripts", "toolchain.sh"), "build", "python"], {
        env,
        stdio: ["ignore", "inherit", "inherit"],
      });
    // Each hook on a fresh copy, stamped with the commit's time: a build leaves its own folders
    // (egg-info, build/) in the source, which the next one's package discovery would take up.
    const pep517 = (hook: "build_sdist" | "build_wheel"): string => {
      const py = path.join(work, `python-${hook}`);
      copySdk("python", py);
      stamp(py, seconds);
      const out = execFileSync(
        python,
        ["-c", `import sys\nfrom setuptools import build_meta as b\nprint(b.${hook}(sys.argv[1]))`, outDir],
        {
          cwd: py,
          env: { ...env, SOURCE_DATE_EPOCH: String(seconds) },
          encoding: "utf8",
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      return out.trim().split("\n").pop()!;
    };
    const sdist = pep517("build_sdist");
    const wheel = pep517("build_wheel");
    const sdistFile = path.join(outDir, sdist);
    fs.writeFileSync(
      sdistFile,
      await tarGz(await entriesOf(fs.readFileSync(sdistFile)), new Date(seconds * 1000)),
    );
    return [tgz, wheel, sdist];
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** The Go SDK's module (sdk/go/go.mod, from the schema's language.go.importBasePath). */
export const GO_SDK_MODULE = "github.com/anynines/klutch-pulumi/sdk/go";

/**
 * The Go SDK as a module proxy serves it (host/toolchain/gomodproxy, on golang.org/x/mod/zip), under
 * dist/goproxy: `GOPROXY=file://<dist>/goproxy,<proxy>` builds a program on it without a
 * `replace`, as it would from a published tag `sdk/go/v<version>` of the repository.
 */
function goModule(outDir: string, version: string, seconds: number, env: NodeJS.ProcessEnv): string[] {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-gomodproxy-"));
  try {
    fs.copyFileSync(
      path.join(repoRoot, "host", "toolchain", "gomodproxy", "main.go"),
      path.join(work, "main.go"),
    );
    fs.writeFileSync(
      path.join(work, "go.mod"),
      "module klutch.local/gomodproxy\n\ngo 1.25\n\nrequire golang.org/x/mod v0.38.0\n",
    );
    const proxy = path.join(outDir, "goproxy");
    execFileSync(
      "go",
      [
        "run",
        ".",
        path.join(SDK_DIR, "go"),
        GO_SDK_MODULE,
        `v${version}`,
        new Date(seconds * 1000).toISOString(),
        proxy,
      ],
      {
        cwd: work,
        env: { ...env, GOFLAGS: "-mod=mod", GOTOOLCHAIN: "local" },
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    const dir = path.join("goproxy", GO_SDK_MODULE, "@v");
    return ["zip", "mod", "info"].map((ext) => path.join(dir, `v${version}.${ext}`));
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The .NET SDK's project as it is (sdk/dotnet): this machine has no .NET SDK to build
 * or pack it, so it ships as sources under `Anynines.Klutch-<version>/`, for `dotnet pack`.
 */
async function dotnetProject(outDir: string, version: string, seconds: number): Promise<string> {
  const root = path.join(SDK_DIR, "dotnet");
  const name = `Anynines.Klutch-${version}`;
  const entries = sdkFiles(root).map((rel) => ({
    name: `${name}/${rel}`,
    mode: 0o644,
    body: fs.readFileSync(path.join(root, rel)),
  }));
  fs.writeFileSync(path.join(outDir, `${name}.tar.gz`), await tarGz(entries, new Date(seconds * 1000)));
  return `${name}.tar.gz`;
}

/** The release's one version: package.json's. */
export function releaseVersion(root = repoRoot): string {
  return (JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { version: string })
    .version;
}

/**
 * The bridge image (host/local-clusters/images/bridge-image.ts: the bridge transpiled, its packages,
 * Node.js, the Pulumi CLI and plugins) as a release ships it, tagged `v<version>`.
 */
export async function releaseBridgeImage(
  outDir: string,
  env: NodeJS.ProcessEnv,
  version = releaseVersion(),
): Promise<ReleasedImage & { file: string }> {
  const spec = bridgeSpec(env, repoRoot, imageCacheDir(env));
  const file = `klutch-bridge-v${version}-linux-amd64.oci.tar`;
  fs.mkdirSync(outDir, { recursive: true });
  const image = await writeReleaseImage(
    { ...spec, repository: BRIDGE_IMAGE_REPOSITORY },
    `v${version}`,
    path.join(outDir, file),
  );
  return { ...image, file };
}

/**
 * Klutch's composition function as a Function package (the one the local stack installs from its
 * registry), built by the toolchain's `crossplane xpkg build` with its runtime image embedded.
 * Push it with `crossplane xpkg push --package-files=<file> <registry>/<repository>:v<version>`.
 */
async function functionPackage(outDir: string, version: string, env: NodeJS.ProcessEnv): Promise<string> {
  const cli = env.KLUTCH_CROSSPLANE_CLI;
  if (!cli || !fs.existsSync(cli))
    throw new Error(
      `the crossplane CLI is not built (${cli ?? "unset"}): run \`bash host/scripts/toolchain.sh build\``,
    );
  const cacheDir = imageCacheDir(env);
  const image = await buildImage(
    functionImageSpec(repoRoot, cacheDir, `klutch.local/${FUNCTION_PACKAGE.name}`),
    cacheDir,
  );
  const file = `${FUNCTION_PACKAGE.name}-v${version}.xpkg`;
  await buildXpkg(
    cli,
    {
      packageRoot: path.join(repoRoot, FUNCTION_PACKAGE.packageRoot),
      runtimeImage: image.archive,
      out: path.join(outDir, file),
    },
    env,
  );
  return file;
}

export async function release(opts: {
  root: string;
  outDir: string;
  log: (m: string) => void;
  /** The toolchain's environment (its Python), when the caller has it already. */
  env?: NodeJS.ProcessEnv;
  /** Also the bridge image and the Function package (default); a check of the SDKs alone skips them. */
  images?: boolean;
}): Promise<ReleaseResult> {
  const version = releaseVersion(opts.root);
  const bundled = await build({
    entryPoints: [path.join(opts.root, "programs", "klutch-provider", "main.ts")],
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
  const seconds = sourceDate(opts.root);
  const archive = await tarGz(
    [
      { name: "provider.js", mode: 0o644, body: Buffer.from(bundle.contents) },
      { name: "pulumi-resource-klutch", mode: 0o755, body: Buffer.from(LAUNCHER) },
    ],
    new Date(seconds * 1000),
  );
  fs.mkdirSync(opts.outDir, { recursive: true });
  const file = path.join(opts.outDir, name);
  fs.writeFileSync(file, archive);
  const env = opts.env ?? toolchainEnv();
  const sdks = [
    ...(await sdkPackages(opts.outDir, seconds, env)),
    ...goModule(opts.outDir, version, seconds, env),
    await dotnetProject(opts.outDir, version, seconds),
  ];
  const artifacts = [...sdks];
  let bridgeImage: (ReleasedImage & { file: string }) | undefined;
  if (opts.images !== false) {
    bridgeImage = await releaseBridgeImage(opts.outDir, env, version);
    const pinned = `${bridgeImage.reference}@${bridgeImage.manifestDigest}`;
    fs.writeFileSync(path.join(opts.outDir, "IMAGES"), `${pinned}  ${bridgeImage.file}\n`);
    artifacts.push(bridgeImage.file, await functionPackage(opts.outDir, version, env), "IMAGES");
  }
  const files = Object.fromEntries(
    [name, ...artifacts].sort().map((f) => [
      f,
      createHash("sha256")
        .update(fs.readFileSync(path.join(opts.outDir, f)))
        .digest("hex"),
    ]),
  );
  fs.writeFileSync(
    path.join(opts.outDir, "SHA256SUMS"),
    Object.entries(files)
      .map(([f, sum]) => `${sum}  ${f}\n`)
      .join(""),
  );
  for (const f of artifacts)
    opts.log(`${f}: ${(fs.statSync(path.join(opts.outDir, f)).size / 1024).toFixed(0)} KiB`);
  const sha256 = files[name]!;
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
  return { archive: file, sha256, bridgeImage, files, packages };
}

if (require.main === module) {
  const program = new Command("release")
    .description(
      "Write the klutch plugin's archive, the SDK packages, the bridge image, the Function package and SHA256SUMS to dist/",
    )
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
