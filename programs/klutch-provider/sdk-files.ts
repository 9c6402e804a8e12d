import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { repoRoot, toolchainEnv } from "../../host/automation/toolchain";
import { SCHEMA_FILE } from "./schema-file";

/** Where the generated SDKs are committed, one folder per language; `npm run provider:sdks` writes them. */
export const SDK_DIR = path.join(__dirname, "..", "..", "sdk");

/** The .NET package's logo: the .NET generator would download one; it is given this file. */
export const SDK_LOGO = path.join(__dirname, "logo.png");

/**
 * The toolchain's two generator binaries (host/toolchain/gen-sdk: klutch-gen-sdk at the CLI's Pulumi
 * version; klutch-gen-sdk-dotnet, the `dotnet` build, at the last pkg/v3 that carries the .NET
 * generator, see dotnet.go), by their toolchain env name: the languages each writes, and the
 * arguments it needs besides.
 */
export const SDK_GENERATORS = {
  KLUTCH_GEN_SDK: { languages: ["nodejs", "python", "go"], args: [] },
  KLUTCH_GEN_SDK_DOTNET: { languages: ["dotnet"], args: ["-logo", SDK_LOGO] },
} as const;

export const SDK_LANGUAGES = Object.values(SDK_GENERATORS).flatMap((g) => g.languages);

/**
 * The paths of the SDK generators (host/toolchain/gen-sdk built by `host/scripts/toolchain.sh build
 * gen-sdk`), built first when the toolchain cache has none for these sources and versions.
 */
export function sdkGenerators(): Record<keyof typeof SDK_GENERATORS, string> {
  const script = path.join(repoRoot, "host", "scripts", "toolchain.sh");
  const env = toolchainEnv();
  const paths = Object.fromEntries(
    Object.keys(SDK_GENERATORS).map((name) => {
      const generator = env[name];
      if (!generator) throw new Error(`host/scripts/toolchain.sh env names no ${name}`);
      return [name, generator];
    }),
  ) as Record<keyof typeof SDK_GENERATORS, string>;
  // Only when missing: a warm cache needs no build lock (another build may hold it).
  if (Object.values(paths).some((p) => !fs.existsSync(p)))
    execFileSync("bash", [script, "build", "gen-sdk"], { stdio: "inherit" });
  return paths;
}

/** Writes the SDKs generated from a schema file into `<outDir>/<language>`, replacing what was there. */
export function generateSdks(outDir: string = SDK_DIR, schemaFile: string = SCHEMA_FILE): string {
  const generators = sdkGenerators();
  return (Object.keys(SDK_GENERATORS) as (keyof typeof SDK_GENERATORS)[])
    .map((name) =>
      execFileSync(
        generators[name],
        [
          ...["-schema", schemaFile, "-out", outDir],
          ...["-language", SDK_GENERATORS[name].languages.join(","), ...SDK_GENERATORS[name].args],
        ],
        { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
      ),
    )
    .join("");
}

/**
 * The files of an SDK tree, relative to it, sorted. In a git checkout, those git would keep (what
 * the SDKs' own .gitignore files leave: no bin/, node_modules/ or __pycache__ of a local build).
 */
export function sdkFiles(dir: string): string[] {
  let listed: string;
  try {
    listed = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "--", "."], {
      cwd: dir,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
  } catch {
    return treeFiles(dir);
  }
  return listed
    .split("\n")
    .filter((f) => f && fs.existsSync(path.join(dir, f)))
    .sort();
}

/** Every file of a plain directory tree, relative to it, sorted. */
function treeFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

/**
 * How the committed SDKs (`committed`, in the git checkout) differ from freshly generated ones
 * (`generated`, a plain directory): one line per file missing, left over or changed.
 */
export function sdkDrift(generated: string, committed: string = SDK_DIR): string[] {
  const want = treeFiles(generated);
  const have = fs.existsSync(committed) ? sdkFiles(committed) : [];
  const problems: string[] = [];
  for (const f of want) {
    if (!have.includes(f)) problems.push(`${f}: missing`);
    else if (!fs.readFileSync(path.join(generated, f)).equals(fs.readFileSync(path.join(committed, f))))
      problems.push(`${f}: differs from what the generator makes`);
  }
  for (const f of have) if (!want.includes(f)) problems.push(`${f}: not generated any more`);
  return problems;
}
