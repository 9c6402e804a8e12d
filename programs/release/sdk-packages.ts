/**
 * The SDKs as their languages' packages, built from copies of the generated SDK trees: the
 * Node.js SDK as pulumi-language-nodejs packs one (`npm run build`, package.json into bin/,
 * `npm pack bin`; this repository's node_modules for the build), the Python SDK through
 * setuptools' PEP 517 hooks in the toolchain's Python (the one the Python SDK is tested with), the
 * .NET project as its sources. The Python packages get SOURCE_DATE_EPOCH (which the wheel honours)
 * and sources stamped with the commit's time; the sdist's entries setuptools writes during the
 * build (PKG-INFO, egg-info) carry the build's time, so its tar is rewritten with the commit's
 * time. npm pack writes fixed times itself.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { repoRoot } from "../../host/automation/toolchain";
import { SCHEMA_FILE } from "../klutch-provider/schema-file";
import { SDK_DIR, generateSdks, sdkFiles } from "../klutch-provider/sdk-files";
import { entriesOf, stamp, tarGz } from "./tar-gz";

/**
 * The SDK trees a release packs: the committed ones (sdk/), or, for a release whose plugin is
 * served from elsewhere (a mirror, a test's server), ones generated into `work` from the schema
 * with that pluginDownloadURL, so every package names where its plugin comes from.
 */
export function sdkTrees(work: string, pluginDownloadURL?: string): string {
  const schema = JSON.parse(fs.readFileSync(SCHEMA_FILE, "utf8")) as { pluginDownloadURL?: string };
  if (pluginDownloadURL === undefined || pluginDownloadURL === schema.pluginDownloadURL) return SDK_DIR;
  const schemaFile = path.join(work, "schema.json");
  fs.writeFileSync(schemaFile, JSON.stringify({ ...schema, pluginDownloadURL }, null, 2));
  const out = path.join(work, "sdk");
  generateSdks(out, schemaFile);
  return out;
}

/** A copy of an SDK tree's language folder, with the files git keeps there (sdkFiles). */
function copySdk(sdkRoot: string, language: string, to: string): void {
  const from = path.join(sdkRoot, language);
  for (const rel of sdkFiles(from)) {
    fs.mkdirSync(path.dirname(path.join(to, rel)), { recursive: true });
    fs.copyFileSync(path.join(from, rel), path.join(to, rel));
  }
}

/** The Node.js SDK's npm package and the Python SDK's wheel and sdist, by file name in outDir. */
export async function sdkPackages(
  sdkRoot: string,
  outDir: string,
  seconds: number,
  env: NodeJS.ProcessEnv,
): Promise<string[]> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-release-"));
  try {
    const node = path.join(work, "nodejs");
    copySdk(sdkRoot, "nodejs", node);
    fs.symlinkSync(path.join(repoRoot, "node_modules"), path.join(node, "node_modules"));
    execFileSync("npm", ["run", "build", "--silent"], { cwd: node, env, stdio: "pipe" });
    fs.copyFileSync(path.join(node, "package.json"), path.join(node, "bin", "package.json"));
    const tgz = execFileSync(
      "npm",
      ["pack", path.join(node, "bin"), "--pack-destination", outDir, "--silent"],
      { cwd: work, env, encoding: "utf8" },
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
      copySdk(sdkRoot, "python", py);
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

/**
 * The .NET SDK's project as it is: this machine has no .NET SDK to build or pack it, so it
 * ships as sources under `Anynines.Klutch-<version>/`, for `dotnet pack`.
 */
export async function dotnetProject(
  sdkRoot: string,
  outDir: string,
  version: string,
  seconds: number,
): Promise<string> {
  const root = path.join(sdkRoot, "dotnet");
  const name = `Anynines.Klutch-${version}`;
  const entries = sdkFiles(root).map((rel) => ({
    name: `${name}/${rel}`,
    mode: 0o644,
    body: fs.readFileSync(path.join(root, rel)),
  }));
  fs.writeFileSync(path.join(outDir, `${name}.tar.gz`), await tarGz(entries, new Date(seconds * 1000)));
  return `${name}.tar.gz`;
}
