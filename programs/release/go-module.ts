/**
 * The Go SDK as a module proxy serves it (host/toolchain/gomodproxy, on golang.org/x/mod/zip, no
 * file times in the zip), under dist/goproxy: `GOPROXY=file://<dist>/goproxy,<proxy>` builds a
 * program on it without a `replace`, as it would from a published tag `sdk/go/v<version>`.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { repoRoot } from "../../host/automation/toolchain";
import { GO_SDK_MODULE } from "../../lib/release/publication";

/** The module's .zip, .mod and .info, relative to outDir. */
export function goModule(
  sdkRoot: string,
  outDir: string,
  version: string,
  seconds: number,
  env: NodeJS.ProcessEnv,
): string[] {
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
        path.join(sdkRoot, "go"),
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
