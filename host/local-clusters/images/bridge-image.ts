import { createHash, randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import * as ts from "typescript";
import { which } from "../host/binaries";
import { BRIDGE_UID } from "../../../lib/bridge/deployment";
import { hostFiles, userEntries } from "./host-rootfs";
import type { ImageSpec, LayerEntry } from "./oci-layout";
import {
  BRIDGE_IMAGE_APP,
  INSTANCE_NAMES_ENTRY,
  INSTANCE_NAMES_PROCESS,
} from "../../../lib/instance-names/watcher-process";

/**
 * The bridge's image (`klutch.local/bridge`): this machine's Node runtime, this project's
 * bridge compiled to JavaScript, the production packages it loads, and the Pulumi engine with
 * the plugins its programs need, laid out so `programs/bridge/main.js` runs as it does from the checkout:
 *
 * - /app: the bridge's own modules (the import closure of programs/bridge/main.ts, transpiled file by
 *   file, as the TypeScript loader does from the checkout) at their repository paths, with those of
 *   the instance-names watcher (programs/instance-names/main.ts: a pod in each app cluster runs it
 *   from this image, `node` INSTANCE_NAMES_PROCESS, so no other image is built and shipped), and
 *   package.json (the bridge reads the pinned plugin versions from it); `repoRoot` resolves to /app.
 * - /app/node_modules: only the packages that closure requires and their dependencies, as
 *   package-lock.json resolves them (optional peers left out): what `npm ci --omit=dev` would
 *   install for the bridge, taken from the existing node_modules.
 * - /usr/local/bin: `pulumi` (the toolchain's engine) and `pulumi-resource-pulumi-nodejs`, the
 *   dynamic-provider host the toolchain writes (a /bin/sh script that runs @pulumi/pulumi's
 *   cmd/dynamic-provider with `node`, so /bin/sh is in the image too).
 * - PULUMI_HOME /home/bridge/.pulumi with pulumi-resource-kubernetes installed where
 *   `pulumi plugin install` puts it (plugins/resource-kubernetes-v<version>/): the engine loads
 *   it from there (ambient plugins are ignored, downloads are off) and ensureKubernetesPlugin
 *   finds it installed.
 * - KLUTCH_TOOLCHAIN=image: the toolchain is on PATH already, so host/automation/toolchain.ts does not
 *   ask host/scripts/toolchain.sh (there is no bash nor checkout in the image).
 */

const HOME = "/home/bridge";
const APP = BRIDGE_IMAGE_APP;
/** The bridge's entry point in the repository, and the process it is in the image (its Entrypoint). */
export const BRIDGE_ENTRY = "programs/bridge/main.ts";
export const BRIDGE_PROCESS = `${APP}/${BRIDGE_ENTRY.replace(/\.ts$/, ".js")}`;
export const BRIDGE_PULUMI_HOME = `${HOME}/.pulumi`;
// The instance-names watcher's entry point, and its process in the image (a pod's command, with
// /usr/local/bin/node): lib/instance-names/watcher-process.ts, which the names server's pod reads too.
export { INSTANCE_NAMES_ENTRY, INSTANCE_NAMES_PROCESS };

interface LockPackage {
  version?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

/**
 * What the bridge never loads although a module names it: each implementation's environment side
 * and provider surface, which its spec's loaders require only for the environment stack and the
 * klutch provider (network/contract/implementation.ts
 * `pulumi`); it would bring the cloud SDKs (@pulumi/aws, @pulumi/openstack) into the image.
 */
export const NOT_IN_BRIDGE = /^network\/[^/]+\/(environment\.ts|provider\/)/;

/**
 * The project's own modules the entry point loads, and the packages they require, by name;
 * modules matching `omit` (and what only they import) are left out.
 */
export function importClosure(
  root: string,
  entry: string,
  omit?: RegExp,
): { modules: string[]; packages: string[] } {
  const modules = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (modules.has(file)) return;
    modules.add(file);
    const info = ts.preProcessFile(fs.readFileSync(path.join(root, file), "utf8"), true, true);
    for (const { fileName: spec } of info.importedFiles) {
      if (spec.startsWith(".")) {
        // An ES module names its sibling by the JavaScript file it becomes (`./input.js`).
        const base = path.posix
          .normalize(path.posix.join(path.posix.dirname(file), spec))
          .replace(/\.js$/, "");
        const found = [`${base}.ts`, `${base}/index.ts`].find((f) => fs.existsSync(path.join(root, f)));
        if (!found) throw new Error(`${file} imports ${spec}, which is not a TypeScript module here`);
        if (!omit?.test(found)) visit(found);
      } else if (!spec.startsWith("node:")) {
        const parts = spec.split("/");
        packages.add(spec.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] as string));
      }
    }
  };
  visit(entry);
  return { modules: [...modules].sort(), packages: [...packages].sort() };
}

/** What /app holds: the closures of the bridge and of the instance-names watcher, together. */
export function imageClosure(root: string): { modules: string[]; packages: string[] } {
  const closures = [BRIDGE_ENTRY, INSTANCE_NAMES_ENTRY].map((e) => importClosure(root, e, NOT_IN_BRIDGE));
  return {
    modules: [...new Set(closures.flatMap((c) => c.modules))].sort(),
    packages: [...new Set(closures.flatMap((c) => c.packages))].sort(),
  };
}

/**
 * The package directories (`node_modules/…` as in package-lock.json) that the named packages
 * need at run time: their dependencies and optional dependencies, and peers unless optional,
 * resolved as Node does (the nearest enclosing node_modules first).
 */
export function productionPackages(
  lock: { packages: Record<string, LockPackage> },
  names: string[],
): string[] {
  const found = new Set<string>();
  const resolve = (from: string, name: string): string | undefined => {
    for (let dir = from; ;) {
      const candidate = `${dir ? `${dir}/` : ""}node_modules/${name}`;
      if (lock.packages[candidate]) return candidate;
      if (!dir) return undefined;
      const at = dir.lastIndexOf("/node_modules/");
      dir = at < 0 ? "" : dir.slice(0, at);
    }
  };
  const visit = (dir: string) => {
    if (found.has(dir)) return;
    found.add(dir);
    const pkg = lock.packages[dir] as LockPackage;
    const peers = Object.keys(pkg.peerDependencies ?? {}).filter(
      (p) => !pkg.peerDependenciesMeta?.[p]?.optional,
    );
    for (const dep of [
      ...Object.keys(pkg.dependencies ?? {}),
      ...Object.keys(pkg.optionalDependencies ?? {}),
      ...peers,
    ]) {
      const at = resolve(dir, dep);
      // An optional dependency for another platform is not installed: not needed either.
      if (at) visit(at);
      else if (!pkg.optionalDependencies?.[dep])
        throw new Error(`${dir} needs ${dep}, not in package-lock.json`);
    }
  };
  for (const name of names) {
    const at = resolve("", name);
    if (!at) throw new Error(`the bridge requires ${name}, which package-lock.json does not list`);
    visit(at);
  }
  return [...found].sort();
}

/**
 * An app's modules as JavaScript, written once per content into `cacheDir` (a warm build
 * reads the sources to hash them and finds the output there). CommonJS like the TypeScript
 * loader makes of the checkout, or ES modules for a folder that is one (`"type": "module"`).
 * `copies` are repository files placed beside them as they are (such a folder's package.json),
 * part of the same content, so the folder is complete when it appears.
 */
export function transpiled(
  root: string,
  modules: string[],
  cacheDir: string,
  kind: "commonjs" | "esm" = "commonjs",
  copies: string[] = [],
): string {
  const hash = createHash("sha256");
  const sources = modules.map((m) => {
    const text = fs.readFileSync(path.join(root, m), "utf8");
    hash.update(`${m}\0${text}\0`);
    return [m, text] as const;
  });
  const copied = copies.map((c) => {
    const bytes = fs.readFileSync(path.join(root, c));
    hash.update(`copy\0${c}\0`).update(bytes).update("\0");
    return [c, bytes] as const;
  });
  hash.update(`${ts.version}\0${kind}`);
  const out = path.join(cacheDir, ".bridge-app", hash.digest("hex").slice(0, 16));
  if (fs.existsSync(path.join(out, ".complete"))) return out;
  const tmp = `${out}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
  const compilerOptions: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: kind === "esm" ? ts.ModuleKind.ES2022 : ts.ModuleKind.CommonJS,
    esModuleInterop: true,
    resolveJsonModule: true,
  };
  for (const [m, text] of sources) {
    const js = ts.transpileModule(text, { compilerOptions, fileName: m }).outputText;
    const file = path.join(tmp, m.replace(/\.ts$/, ".js"));
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, js);
  }
  for (const [c, bytes] of copied) {
    fs.mkdirSync(path.dirname(path.join(tmp, c)), { recursive: true });
    fs.writeFileSync(path.join(tmp, c), bytes);
  }
  fs.writeFileSync(path.join(tmp, ".complete"), "");
  try {
    fs.renameSync(tmp, out);
  } catch (err) {
    // Another build of the same sources got there first (a directory is not renamed over a
    // full one): its output is the same, and callers may be reading it, so keep it.
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!fs.existsSync(path.join(out, ".complete"))) throw err;
  }
  return out;
}

/** Type declarations, source maps and docs: nothing Node loads at run time (a third of the bytes). */
const NOT_RUNTIME = /(\.d\.[cm]?ts|\.map|\.md|\.markdown)$/i;

/**
 * Every file and symlink of a package directory that Node may load, without its nested
 * node_modules (listed on their own).
 */
export function packageEntries(root: string, dir: string, app = APP): LayerEntry[] {
  const entries: LayerEntry[] = [];
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = `${rel}/${e.name}`;
      const target = `${app}/${child}`;
      if (e.isDirectory()) {
        if (e.name !== "node_modules") walk(child);
      } else if (e.isSymbolicLink()) {
        entries.push({ type: "symlink", path: target, target: fs.readlinkSync(path.join(root, child)) });
      } else if (e.isFile() && !NOT_RUNTIME.test(e.name)) {
        const source = path.join(root, child);
        entries.push({ type: "file", path: target, mode: fs.statSync(source).mode & 0o755, source });
      }
    }
  };
  walk(dir);
  return entries;
}

function tool(name: string, env: NodeJS.ProcessEnv): string {
  const found = which(name, env);
  if (!found) throw new Error(`${name} not found on PATH: run \`bash host/scripts/toolchain.sh build\``);
  return fs.realpathSync(found);
}

/** The image spec; `root` is the checkout (its node_modules and package-lock.json are read). */
export function bridgeSpec(env: NodeJS.ProcessEnv, root: string, cacheDir: string): ImageSpec {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as {
    version: string;
    dependencies: Record<string, string>;
  };
  const lock = JSON.parse(fs.readFileSync(path.join(root, "package-lock.json"), "utf8")) as {
    packages: Record<string, LockPackage>;
  };
  const { modules, packages } = imageClosure(root);
  const app = transpiled(root, modules, cacheDir);
  const kubernetesPlugin = pkg.dependencies["@pulumi/kubernetes"] as string;
  const pulumiVersion = pkg.dependencies["@pulumi/pulumi"] as string;
  const node = fs.realpathSync(process.execPath);
  return {
    repository: "klutch.local/bridge",
    version: `${pkg.version}-node${process.versions.node}-pulumi${pulumiVersion}`,
    config: {
      Entrypoint: ["/usr/local/bin/node", BRIDGE_PROCESS],
      Env: [
        "PATH=/usr/local/bin:/usr/bin:/bin",
        `HOME=${HOME}`,
        `PULUMI_HOME=${BRIDGE_PULUMI_HOME}`,
        "PULUMI_SKIP_UPDATE_CHECK=true",
        "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true",
        "KLUTCH_TOOLCHAIN=image",
        // Node.js's module compile cache (host/scripts/node.sh says why): the dynamic-provider hosts
        // every engine run starts load @pulumi/pulumi again, in 0.65 times the CPU with it.
        `NODE_COMPILE_CACHE=${HOME}/.cache/node-compile-cache`,
      ],
      User: `${BRIDGE_UID}:${BRIDGE_UID}`,
      WorkingDir: APP,
    },
    entries: [
      { type: "file", path: "/usr/local/bin/node", mode: 0o755, source: node },
      ...hostFiles([{ path: node }]).filter((e) => e.path !== node),
      ...hostFiles([{ path: "/bin/dash" }]),
      { type: "symlink", path: "/bin/sh", target: "dash" },
      { type: "file", path: "/usr/local/bin/pulumi", mode: 0o755, source: tool("pulumi", env) },
      {
        type: "file",
        path: "/usr/local/bin/pulumi-resource-pulumi-nodejs",
        mode: 0o755,
        source: tool("pulumi-resource-pulumi-nodejs", env),
      },
      {
        type: "file",
        path: `${BRIDGE_PULUMI_HOME}/plugins/resource-kubernetes-v${kubernetesPlugin}/pulumi-resource-kubernetes`,
        mode: 0o755,
        source: tool("pulumi-resource-kubernetes", env),
      },
      ...modules.map((m): LayerEntry => ({
        type: "file",
        path: `${APP}/${m.replace(/\.ts$/, ".js")}`,
        mode: 0o644,
        source: path.join(app, m.replace(/\.ts$/, ".js")),
      })),
      { type: "file", path: `${APP}/package.json`, mode: 0o644, source: path.join(root, "package.json") },
      ...productionPackages(lock, packages).flatMap((dir) => packageEntries(root, dir)),
      ...userEntries([{ name: "bridge", uid: BRIDGE_UID, home: HOME }]),
      // The engine writes its workspaces and plugin locks under PULUMI_HOME; the image's files
      // are root's, so the directories it writes into are open to the bridge's user (the only
      // one in the container), sticky like /tmp.
      { type: "dir", path: HOME, mode: 0o1777 },
      { type: "dir", path: BRIDGE_PULUMI_HOME, mode: 0o1777 },
      { type: "dir", path: `${BRIDGE_PULUMI_HOME}/plugins`, mode: 0o1777 },
    ],
  };
}
