import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { which } from "../host/binaries";
import { userEntries } from "./host-rootfs";
import type { ImageSpec } from "./oci-layout";

const PATH_ENV = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** The uid of upstream's Crossplane image (distroless `nonroot`, `USER 65532` in its Earthfile). */
export const CROSSPLANE_UID = 65532;

/**
 * Crossplane core laid out as upstream's image (the `crossplane-image` target of the pinned
 * module's Earthfile: `/usr/local/bin/crossplane`, `cluster/crds` as `/crds`,
 * `cluster/webhookconfigurations` as `/webhookconfigurations`, `USER 65532`, entrypoint
 * `crossplane`), from the static binary and the files the toolchain built and copied from that
 * module. The chart's init container (`core init`) reads /crds and /webhookconfigurations, its
 * core container runs `core start`, and the RBAC manager runs `rbac start` from the same image.
 */
export function crossplaneSpec(repository: string, env: NodeJS.ProcessEnv): ImageSpec {
  const crossplane = which("crossplane", env);
  if (!crossplane)
    throw new Error("crossplane not found on PATH: run `bash host/scripts/toolchain.sh build`");
  const said = execFileSync(crossplane, ["--version"], { encoding: "utf8", env }).trim();
  const version = /^v(\d+\.\d+\.\d+\S*)$/.exec(said)?.[1];
  if (!version) throw new Error(`${crossplane} --version printed no Crossplane version: ${said}`);
  const clusterDir = env.KLUTCH_CROSSPLANE_CLUSTER_DIR;
  if (!clusterDir || !fs.existsSync(clusterDir))
    throw new Error(
      `KLUTCH_CROSSPLANE_CLUSTER_DIR (${clusterDir ?? "unset"}) names no Crossplane cluster folder: run \`bash host/scripts/toolchain.sh build\``,
    );
  const copy = (from: string, to: string) =>
    fs
      .readdirSync(path.join(clusterDir, from))
      .filter((f) => f.endsWith(".yaml"))
      .sort()
      .map((f) => ({
        type: "file" as const,
        path: `${to}/${f}`,
        mode: 0o644,
        source: path.join(clusterDir, from, f),
      }));
  return {
    repository,
    version,
    config: {
      Entrypoint: ["crossplane"],
      Env: [PATH_ENV],
      User: `${CROSSPLANE_UID}`,
    },
    entries: [
      { type: "file", path: "/usr/local/bin/crossplane", mode: 0o755, source: crossplane },
      ...copy("crds", "/crds"),
      ...copy("webhookconfigurations", "/webhookconfigurations"),
      ...userEntries([{ name: "nonroot", uid: CROSSPLANE_UID, home: "/home/nonroot" }]),
      { type: "dir", path: "/tmp", mode: 0o1777 },
    ],
  };
}
