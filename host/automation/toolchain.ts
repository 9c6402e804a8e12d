import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

export const repoRoot = path.resolve(__dirname, "..", "..");

/** Node.js flags that run this project's TypeScript files (host/scripts/register-typescript.cjs). */
export const NODE_TYPESCRIPT_ARGS = [
  "--require",
  path.join(repoRoot, "host", "scripts", "register-typescript.cjs"),
];

/**
 * The environment in which the built toolchain (pulumi, kube-apiserver, etcd, …) is on PATH,
 * as printed by `host/scripts/toolchain.sh env`. It does not build anything: callers that need the
 * tools run `host/scripts/toolchain.sh build` first (the README's commands and the tests do).
 */
export function toolchainEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  // The bridge's image (host/local-clusters/images/bridge-image.ts) has the toolchain on PATH and
  // neither bash nor host/scripts/ to ask.
  if (base.KLUTCH_TOOLCHAIN === "image") return { ...base };
  assertProjectNode();
  const script = path.join(repoRoot, "host", "scripts", "toolchain.sh");
  const out = execFileSync("bash", [script, "env"], { encoding: "utf8", env: base });
  // The engine starts `node` from PATH (the dynamic-provider and policy hosts): the Node.js this
  // process runs on comes first, so they run on the same runtime as the program.
  const basePath = [path.dirname(process.execPath), base.PATH].filter(Boolean).join(path.delimiter);
  const env: NodeJS.ProcessEnv = { ...base, PATH: basePath };
  for (const line of out.split("\n")) {
    const m = /^export ([A-Z_][A-Z0-9_]*)="?(.*?)"?$/.exec(line.trim());
    if (!m) continue;
    const [, key, raw] = m as unknown as [string, string, string];
    env[key] = raw.replace(/\$PATH/g, basePath);
  }
  return env;
}

/**
 * The chart and CRD folders of the Crossplane cores the toolchain built: v2's first, then 1.20's
 * (host/automation/local-crossplane-source.ts picks the one of the version an environment runs).
 */
export function toolchainCrossplaneClusterDirs(
  env: NodeJS.ProcessEnv = toolchainEnv(),
): (string | undefined)[] {
  return [env.KLUTCH_CROSSPLANE_CLUSTER_DIR, env.KLUTCH_CROSSPLANE_LEGACY_CLUSTER_DIR];
}

/** The Node.js major line the project runs on: NODE_VERSION of host/toolchain/versions.env. */
export function projectNodeMajor(): number {
  const text = fs.readFileSync(path.join(repoRoot, "host", "toolchain", "versions.env"), "utf8");
  const m = /^NODE_VERSION=(\d+)\./m.exec(text);
  if (!m) throw new Error("host/toolchain/versions.env has no NODE_VERSION=<major>.<minor>.<patch> line");
  return Number(m[1]);
}

/**
 * Refuses to drive the engine from another Node.js line than the project's: @pulumi/pulumi needs
 * Node 22 or later, and the engine's Node.js hosts would run on whatever `node` PATH has.
 */
export function assertProjectNode(version: string = process.versions.node): void {
  const want = projectNodeMajor();
  const major = Number(version.split(".")[0]);
  if (major !== want) {
    throw new Error(
      `this runs on Node.js ${version}, but the project runs on Node.js ${want} (host/toolchain/versions.env ` +
        `NODE_VERSION): start it with \`npm run …\` or \`bash host/scripts/node.sh ts <script>\`, which use that runtime`,
    );
  }
}
