import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { functionImageSpec } from "../images/function-image";
import { buildImage, type ImageSpec } from "../images/oci-layout";
import { providerKubernetesImageSpec } from "../images/provider-kubernetes-image";
import { hasTag, type RegistryInfo } from "../registry/registry";
import {
  FUNCTION_PACKAGE,
  PACKAGES_FILE,
  PROVIDER_KUBERNETES_PACKAGE,
  type PublishedPackages,
} from "../../../lib/local/packages";

const execFileAsync = promisify(execFile);

/** One package to publish: its runtime image, its package root (crossplane.yaml and objects) and tag. */
interface PackageBuild {
  name: string;
  repository: string;
  image: ImageSpec;
  packageRoot: string;
  /** The tag, given the 12 hex digits that name the content (image and package root). */
  tag: (content: string) => string;
}

/**
 * Builds the project's Crossplane packages and pushes them to the local registry, the way an
 * operator publishes packages: `crossplane xpkg build` (the toolchain's CLI, v1.20.11) with the
 * runtime image embedded, then `crossplane xpkg push`, which turns the build's
 * `io.crossplane.xpkg` config labels into the layer annotation Crossplane's package manager
 * looks for (cmd/crank/xpkg/push.go). A package whose content is unchanged is neither rebuilt
 * (the .xpkg is cached by content) nor pushed again (the registry has its tag with that content).
 *
 * - function-klutch: Klutch's composition function (programs/composition-function/), tagged
 *   `v<package.json version>-g<content>`, a semantic version whose pre-release part names the content;
 * - provider-kubernetes: upstream's provider at Klutch's pinned version, built by the toolchain
 *   from its Go module with upstream's package root, tagged with upstream's version.
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
  const providerDir = opts.env.KLUTCH_PROVIDER_KUBERNETES_DIR;
  for (const [what, file] of [
    ["the crossplane CLI", cli],
    ["provider-kubernetes", providerDir],
  ] as const)
    if (!file || !fs.existsSync(file))
      throw new Error(
        `${what} is not built (${file ?? "unset"}): run \`bash host/scripts/toolchain.sh build\``,
      );
  const pkg = JSON.parse(fs.readFileSync(path.join(opts.root, "package.json"), "utf8")) as {
    version: string;
  };
  const providerVersion = path.basename(providerDir!).replace(/^provider-kubernetes-/, "");
  const builds: PackageBuild[] = [
    {
      name: FUNCTION_PACKAGE.name,
      repository: FUNCTION_PACKAGE.repository,
      image: functionImageSpec(opts.root, opts.cacheDir, `klutch.local/${FUNCTION_PACKAGE.name}`),
      packageRoot: path.join(opts.root, FUNCTION_PACKAGE.packageRoot),
      tag: (content) => `v${pkg.version}-g${content}`,
    },
    {
      name: PROVIDER_KUBERNETES_PACKAGE.name,
      repository: PROVIDER_KUBERNETES_PACKAGE.repository,
      image: providerKubernetesImageSpec(providerDir!, providerVersion),
      packageRoot: path.join(providerDir!, "package"),
      tag: () => `v${providerVersion}`,
    },
  ];
  const file = path.join(opts.registryDir, PACKAGES_FILE);
  let before: PublishedPackages = {};
  try {
    before = JSON.parse(fs.readFileSync(file, "utf8")) as PublishedPackages;
  } catch {
    // nothing published yet
  }
  const published: PublishedPackages = {};
  for (const b of builds) {
    const image = await buildImage(b.image, opts.cacheDir);
    const content = contentOf(image.manifestDigest, b.packageRoot);
    const tag = b.tag(content);
    const xpkg = path.join(opts.cacheDir, "packages", `${b.name}-${tag}-${content}.xpkg`);
    if (!fs.existsSync(xpkg)) {
      const start = Date.now();
      fs.mkdirSync(path.dirname(xpkg), { recursive: true });
      const tmp = `${xpkg}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
      await buildXpkg(cli!, { packageRoot: b.packageRoot, runtimeImage: image.archive, out: tmp }, opts.env);
      fs.renameSync(tmp, xpkg);
      opts.log(`built ${path.basename(xpkg)} (${mib(xpkg)} MiB) in ${seconds(start)}s`);
    }
    const { port, caCert } = opts.registry;
    const known = before[b.name];
    const pushed =
      known?.tag === tag && known.content === content && (await hasTag(port, caCert, b.repository, tag));
    if (!pushed) {
      const start = Date.now();
      await run(
        cli!,
        ["xpkg", "push", `--package-files=${xpkg}`, `127.0.0.1:${port}/${b.repository}:${tag}`],
        // The CLI's transport trusts the system pool only (internal/xpkg/upbound/context.go).
        { ...opts.env, SSL_CERT_FILE: caCert },
      );
      opts.log(`pushed ${b.repository}:${tag} in ${seconds(start)}s`);
    }
    published[b.name] = { repository: b.repository, tag, content };
    fs.writeFileSync(file, `${JSON.stringify({ ...before, ...published }, null, 2)}\n`);
  }
  return published;
}

/**
 * `crossplane xpkg build` of a package root (crossplane.yaml, its objects and examples/) with the
 * runtime image embedded (an archive with Docker's manifest.json, see ImageSpec.dockerManifest).
 * The same inputs give the same bytes: the CLI stamps no time into the package.
 */
export async function buildXpkg(
  cli: string,
  pkg: { packageRoot: string; runtimeImage: string; out: string },
  env: NodeJS.ProcessEnv,
): Promise<void> {
  await run(
    cli,
    [
      "xpkg",
      "build",
      `--package-root=${pkg.packageRoot}`,
      `--examples-root=${path.join(pkg.packageRoot, "examples")}`,
      `--embed-runtime-image-tarball=${pkg.runtimeImage}`,
      `--package-file=${pkg.out}`,
    ],
    env,
  );
}

/** 12 hex digits of the runtime image's digest and every file of the package root. */
function contentOf(imageDigest: string, packageRoot: string): string {
  const hash = createHash("sha256").update(`${imageDigest}\0`);
  const walk = (dir: string) => {
    for (const e of fs
      .readdirSync(dir, { withFileTypes: true })
      .sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) hash.update(`${path.relative(packageRoot, p)}\0`).update(fs.readFileSync(p));
    }
  };
  walk(packageRoot);
  return hash.digest("hex").slice(0, 12);
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
