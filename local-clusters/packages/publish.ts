import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { functionImageSpec } from "../images/function-image";
import { buildImage } from "../images/oci-layout";
import { hasTag, type RegistryInfo } from "../registry/registry";
import { FUNCTION_PACKAGE, PACKAGES_FILE, type PublishedPackages } from "../../lib/local/packages";

const execFileAsync = promisify(execFile);

/**
 * Builds the project's Crossplane packages and pushes them to the local registry, the way an
 * operator publishes packages: `crossplane xpkg build` (the toolchain's CLI, v1.20.11) with the
 * runtime image embedded, then `crossplane xpkg push`, which turns the build's
 * `io.crossplane.xpkg` config labels into the layer annotation Crossplane's package manager
 * looks for (cmd/crank/xpkg/push.go). A package whose content is unchanged is neither rebuilt
 * (the .xpkg is cached by content) nor pushed again (the registry already has its tag).
 */
export async function publishPackages(opts: {
  root: string;
  cacheDir: string;
  registry: RegistryInfo;
  registryDir: string;
  env: NodeJS.ProcessEnv;
  log: (message: string) => void;
}): Promise<PublishedPackages> {
  const cli = opts.env.KLUTCH_CROSSPLANE_CLI;
  if (!cli || !fs.existsSync(cli))
    throw new Error(
      `the crossplane CLI is not built (${cli ?? "unset"}): run \`bash scripts/toolchain.sh build\``,
    );
  const pkg = JSON.parse(fs.readFileSync(path.join(opts.root, "package.json"), "utf8")) as {
    version: string;
  };

  const image = await buildImage(
    functionImageSpec(opts.root, opts.cacheDir, `klutch.local/${FUNCTION_PACKAGE.name}`),
    opts.cacheDir,
  );
  const packageRoot = path.join(opts.root, FUNCTION_PACKAGE.packageRoot);
  const meta = fs.readFileSync(path.join(packageRoot, "crossplane.yaml"), "utf8");
  const content = createHash("sha256").update(`${image.manifestDigest}\0${meta}`).digest("hex").slice(0, 12);
  // A semantic version, as Crossplane wants of package tags; the pre-release part names the content.
  const tag = `v${pkg.version}-g${content}`;
  const xpkg = path.join(opts.cacheDir, "packages", `${FUNCTION_PACKAGE.name}-${tag}.xpkg`);
  if (!fs.existsSync(xpkg)) {
    const start = Date.now();
    fs.mkdirSync(path.dirname(xpkg), { recursive: true });
    const tmp = `${xpkg}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
    await run(
      cli,
      [
        "xpkg",
        "build",
        `--package-root=${packageRoot}`,
        `--examples-root=${path.join(packageRoot, "examples")}`,
        `--embed-runtime-image-tarball=${image.archive}`,
        `--package-file=${tmp}`,
      ],
      opts.env,
    );
    fs.renameSync(tmp, xpkg);
    opts.log(`built ${path.basename(xpkg)} (${mib(xpkg)} MiB) in ${seconds(start)}s`);
  }
  const { port, caCert } = opts.registry;
  if (!(await hasTag(port, caCert, FUNCTION_PACKAGE.repository, tag))) {
    const start = Date.now();
    await run(
      cli,
      ["xpkg", "push", `--package-files=${xpkg}`, `127.0.0.1:${port}/${FUNCTION_PACKAGE.repository}:${tag}`],
      {
        ...opts.env,
        // The CLI's transport trusts the system pool only (internal/xpkg/upbound/context.go).
        SSL_CERT_FILE: caCert,
      },
    );
    opts.log(`pushed ${FUNCTION_PACKAGE.repository}:${tag} in ${seconds(start)}s`);
  }
  const published: PublishedPackages = {
    [FUNCTION_PACKAGE.name]: { repository: FUNCTION_PACKAGE.repository, tag },
  };
  fs.writeFileSync(path.join(opts.registryDir, PACKAGES_FILE), `${JSON.stringify(published, null, 2)}\n`);
  return published;
}

async function run(cli: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  try {
    await execFileAsync(cli, args, { env, timeout: 300_000, maxBuffer: 16 << 20 });
  } catch (err) {
    const e = err as Error & { stderr?: string; stdout?: string };
    throw new Error(
      `crossplane ${args.slice(0, 2).join(" ")} failed: ${(e.stderr || e.stdout || e.message).trim()}`,
    );
  }
}

const seconds = (since: number) => Math.round((Date.now() - since) / 100) / 10;
const mib = (file: string) => Math.round(fs.statSync(file).size / (1 << 20));
