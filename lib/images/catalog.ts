import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { which } from "../local-clusters/binaries";
import { debianVersion, hostFiles, userEntries } from "./host-rootfs";
import { buildImage, type BuiltImage, type ImageSpec } from "./oci-layout";

/**
 * The images local nodes run, built on this machine (see host-rootfs.ts for why from host
 * binaries) and cached by content in ~/.cache/klutch-pulumi/images: the archive's name is the
 * manifest digest, so a changed binary, library or config makes a new image and tag.
 */

export const IMAGE_REPOSITORY = "klutch.local";

/** The uid of the official HAProxy image's `haproxy` user, which the TcpProxy pods run as. */
export const HAPROXY_UID = 99;

const PATH_ENV = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

export function imageCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache");
  return env.KLUTCH_IMAGE_CACHE ?? path.join(base, "klutch-pulumi", "images");
}

function find(name: string, env: NodeJS.ProcessEnv): string {
  const found = which(name, env);
  if (!found) throw new Error(`${name} not found on PATH: run \`bash scripts/setup.sh\``);
  return found;
}

/**
 * The CRI sandbox image: the static `pause` the toolchain compiles from the pinned Kubernetes
 * module's build/pause/linux/pause.c (it reaps zombies and exits on SIGTERM/SIGINT).
 */
export function pauseSpec(env: NodeJS.ProcessEnv): ImageSpec {
  const pause = find("pause", env);
  const versionFile = path.join(path.dirname(path.dirname(pause)), "pause.version");
  const version = fs.existsSync(versionFile) ? fs.readFileSync(versionFile, "utf8").trim() : "local";
  return {
    repository: `${IMAGE_REPOSITORY}/pause`,
    version,
    config: { Entrypoint: ["/pause"], User: "65535:65535" },
    entries: [{ type: "file", path: "/pause", mode: 0o755, source: pause }],
  };
}

/**
 * HAProxy from Debian's package (the one the data-plane tests run), laid out like the
 * official image the TcpProxy component expects: `haproxy` on PATH, the config directory
 * /usr/local/etc/haproxy (a ConfigMap is mounted there), user `haproxy` with uid 99.
 */
export function haproxySpec(): ImageSpec {
  return {
    repository: `${IMAGE_REPOSITORY}/haproxy`,
    version: debianVersion("haproxy"),
    config: {
      Entrypoint: ["/usr/sbin/haproxy"],
      Cmd: ["-f", "/usr/local/etc/haproxy/haproxy.cfg", "-db"],
      Env: [PATH_ENV],
      User: `${HAPROXY_UID}:${HAPROXY_UID}`,
    },
    entries: [
      ...hostFiles([{ path: "/usr/sbin/haproxy" }]),
      ...userEntries([{ name: "haproxy", uid: HAPROXY_UID, home: "/var/lib/haproxy" }]),
      { type: "dir", path: "/usr/local/etc/haproxy" },
      { type: "dir", path: "/var/lib/haproxy" },
    ],
  };
}

export const IMAGE_NAMES = ["pause", "haproxy"] as const;
export type ImageName = (typeof IMAGE_NAMES)[number];

export type BuiltImages = Record<ImageName, BuiltImage>;

/** Builds (or finds in the cache) every image a node imports. */
export async function buildNodeImages(
  env: NodeJS.ProcessEnv,
  cacheDir = imageCacheDir(env),
): Promise<BuiltImages> {
  const [pause, haproxy] = await Promise.all([
    buildImage(pauseSpec(env), cacheDir),
    buildImage(haproxySpec(), cacheDir),
  ]);
  return { pause, haproxy };
}
