/**
 * The klutch resource plugin as the engine installs it: one archive per platform,
 * `pulumi-resource-klutch-v<version>-<os>-<arch>.tar.gz`, the name the engine asks a plugin
 * server for (pulumi/pulumi sdk/go/common/workspace/plugins.go, PluginDescriptor's archive name,
 * v3.276.0). Every archive holds the same bundle, the provider with everything it loads in one
 * JavaScript file (esbuild, from programs/klutch-provider/main.ts), and its platform's launcher,
 * which runs it on the Node.js on PATH as Pulumi's own Node.js language host does. Node is not
 * shipped (about 100 MB per platform); the launcher checks its version and says what is missing.
 * On Windows the engine looks for `<name>.exe`, then `<name>.cmd` (getCandidateExtensions there).
 */
import { build, type Metafile } from "esbuild";
import * as path from "node:path";
import { tarGz } from "./tar-gz";

/**
 * The oldest Node.js major the bundle is built for (esbuild's target) and runs on: 24, in
 * maintenance until 2028-04-30, so users outside this repository need not move with it; the
 * project itself runs on 26 (docs/versions.md).
 */
export const NODE_MAJOR = 24;

/** The launcher of Linux and macOS, run by /bin/sh. */
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

/**
 * The version check of the Windows launcher, run by `node -e` so that cmd.exe need not parse a
 * version; it says what the sh launcher says.
 */
export const WINDOWS_NODE_CHECK = `if (+process.versions.node.split('.')[0] < ${NODE_MAJOR}) { console.error('pulumi-resource-klutch: needs Node.js ${NODE_MAJOR} or later on PATH; found ' + process.version); process.exit(1); }`;

/** The launcher of Windows, run by cmd.exe: CRLF line ends, as cmd.exe's labels and blocks need. */
export const WINDOWS_LAUNCHER = [
  "@echo off",
  "rem The klutch resource plugin: the provider bundled in provider.js, run by the Node.js on PATH.",
  "where node >nul 2>nul || (",
  `  echo pulumi-resource-klutch: Node.js ${NODE_MAJOR} or later must be on PATH; none was found 1>&2`,
  "  exit /b 1",
  ")",
  `node -e "${WINDOWS_NODE_CHECK}" || exit /b 1`,
  'node "%~dp0provider.js" %*',
  "",
].join("\r\n");

/** The platforms a release serves, as the engine names them (`<os>-<arch>`). */
export const PLATFORMS = [
  "linux-amd64",
  "linux-arm64",
  "darwin-amd64",
  "darwin-arm64",
  "windows-amd64",
] as const;
export type Platform = (typeof PLATFORMS)[number];

export const pluginArchiveName = (version: string, platform: Platform): string =>
  `pulumi-resource-klutch-v${version}-${platform}.tar.gz`;

/** The launcher's file in a platform's archive, with its mode. */
export function launcherOf(platform: Platform): { name: string; mode: number; body: string } {
  return platform.startsWith("windows-")
    ? { name: "pulumi-resource-klutch.cmd", mode: 0o755, body: WINDOWS_LAUNCHER }
    : { name: "pulumi-resource-klutch", mode: 0o755, body: LAUNCHER };
}

/** The provider bundled into one file (esbuild's output is deterministic), with its metafile. */
export async function bundleProvider(root: string): Promise<{ js: Uint8Array; meta: Metafile }> {
  const bundled = await build({
    entryPoints: [path.join(root, "programs", "klutch-provider", "main.ts")],
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
  return { js: bundle.contents, meta: bundled.metafile };
}

/** Every platform's archive of one bundle, by file name. */
export async function pluginArchives(
  bundle: Uint8Array,
  version: string,
  mtime: Date,
): Promise<Map<string, Buffer>> {
  const archives = new Map<string, Buffer>();
  for (const platform of PLATFORMS) {
    const launcher = launcherOf(platform);
    archives.set(
      pluginArchiveName(version, platform),
      await tarGz(
        [
          { name: "provider.js", mode: 0o644, body: Buffer.from(bundle) },
          { name: launcher.name, mode: launcher.mode, body: Buffer.from(launcher.body) },
        ],
        mtime,
      ),
    );
  }
  return archives;
}

/** Bytes in the bundle per package, from esbuild's metafile, largest first. */
export function bundledPackages(meta: Metafile): [string, number][] {
  const sizes = new Map<string, number>();
  for (const output of Object.values(meta.outputs))
    for (const [file, input] of Object.entries(output.inputs)) {
      const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file)?.[1] ?? "project";
      sizes.set(pkg, (sizes.get(pkg) ?? 0) + input.bytesInOutput);
    }
  return [...sizes].sort((a, b) => b[1] - a[1]);
}
