import { execFileSync } from "node:child_process";
import * as path from "node:path";

export const repoRoot = path.resolve(__dirname, "..");

/**
 * The environment in which the built toolchain (pulumi, kube-apiserver, etcd, …) is on PATH,
 * as printed by `scripts/toolchain.sh env`. It does not build anything: callers that need the
 * tools run `scripts/toolchain.sh build` first (the README's commands and the tests do).
 */
export function toolchainEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  // The bridge's image (local-clusters/images/bridge-image.ts) has the toolchain on PATH and
  // neither bash nor scripts/ to ask.
  if (base.KLUTCH_TOOLCHAIN === "image") return { ...base };
  const script = path.join(repoRoot, "scripts", "toolchain.sh");
  const out = execFileSync("bash", [script, "env"], { encoding: "utf8", env: base });
  const env: NodeJS.ProcessEnv = { ...base };
  for (const line of out.split("\n")) {
    const m = /^export ([A-Z_][A-Z0-9_]*)="?(.*?)"?$/.exec(line.trim());
    if (!m) continue;
    const [, key, raw] = m as unknown as [string, string, string];
    env[key] = raw.replace(/\$PATH/g, base.PATH ?? "");
  }
  return env;
}
