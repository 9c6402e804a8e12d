import * as fs from "node:fs";
import * as path from "node:path";
import { hostFiles } from "./host-rootfs";
import type { ImageSpec, LayerEntry } from "./oci-layout";
import { importClosure, packageEntries, productionPackages, transpiled } from "./bridge-image";

/**
 * The runtime image of Klutch's composition function (programs/composition-function/): this machine's
 * Node runtime, the function's ES modules transpiled file by file at their repository paths,
 * and the packages they import (the function SDK and its dependencies, as package-lock.json
 * resolves them). `crossplane xpkg build` embeds it in the Function package, so the image the
 * node runs is the package itself (Crossplane's function runtime runs the package's image).
 *
 * The SDK serves gRPC on 0.0.0.0:9443 with the TLS material Crossplane mounts at /tls/server
 * (its flag defaults, @crossplane-org/function-sdk-typescript 0.7.0 dist/serve/serve.js), so
 * the entry point takes no arguments. Crossplane runs function pods as a non-root user of its
 * choosing: every file is world-readable and nothing is written.
 */

const APP = "/app";
export const FUNCTION_ENTRY = "programs/composition-function/main.ts";
/** Placed beside the transpiled modules: its `"type": "module"` makes their .js ES modules. */
const FUNCTION_PACKAGE_JSON = "programs/composition-function/package.json";
/** The uid of distroless' `nonroot`, which upstream's function images run as. */
export const FUNCTION_UID = 65532;

interface Lock {
  packages: Record<string, { version?: string; dependencies?: Record<string, string> }>;
}

/**
 * The function's application as the image holds it, on this machine: its modules transpiled to
 * ES modules under `cacheDir` at their repository paths, programs/composition-function/package.json (its
 * `"type": "module"`) beside them, and the packages it imports. The image's layer and the render
 * test's server both run this, so what the test serves is what the node runs.
 */
export function functionApp(
  root: string,
  cacheDir: string,
): { app: string; main: string; modules: string[]; packages: string[] } {
  const { modules, packages } = importClosure(root, FUNCTION_ENTRY);
  const outside = modules.filter((m) => !m.startsWith("programs/composition-function/"));
  if (outside.length > 0)
    throw new Error(
      `the composition function must import only its own folder and packages, not ${outside.join(", ")}`,
    );
  const app = transpiled(root, modules, cacheDir, "esm", [FUNCTION_PACKAGE_JSON]);
  return { app, main: path.join(app, FUNCTION_ENTRY.replace(/\.ts$/, ".js")), modules, packages };
}

export function functionImageSpec(root: string, cacheDir: string, repository: string): ImageSpec {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { version: string };
  const lock = JSON.parse(fs.readFileSync(path.join(root, "package-lock.json"), "utf8")) as Lock;
  const { app, modules, packages } = functionApp(root, cacheDir);
  const node = fs.realpathSync(process.execPath);
  return {
    repository,
    version: `${pkg.version}-node${process.versions.node}`,
    config: {
      Entrypoint: ["/usr/local/bin/node", `${APP}/${FUNCTION_ENTRY.replace(/\.ts$/, ".js")}`],
      Env: ["PATH=/usr/local/bin:/usr/bin:/bin", "NODE_ENV=production"],
      User: `${FUNCTION_UID}:${FUNCTION_UID}`,
      WorkingDir: APP,
    },
    dockerManifest: true,
    entries: [
      { type: "file", path: "/usr/local/bin/node", mode: 0o755, source: node },
      ...hostFiles([{ path: node }]).filter((e) => e.path !== node),
      ...modules.map((m): LayerEntry => ({
        type: "file",
        path: `${APP}/${m.replace(/\.ts$/, ".js")}`,
        mode: 0o644,
        source: path.join(app, m.replace(/\.ts$/, ".js")),
      })),
      {
        type: "file",
        path: `${APP}/programs/composition-function/package.json`,
        mode: 0o644,
        source: path.join(app, FUNCTION_PACKAGE_JSON),
      },
      ...productionPackages(lock, packages).flatMap((dir) => packageEntries(root, dir, APP)),
    ],
  };
}
