import { debianVersion, hostFiles, userEntries } from "./host-rootfs";
import type { ImageSpec } from "./oci-layout";

/** The uid of the official Redis image's `redis` user. */
export const REDIS_UID = 999;
/** Where the server listens, on every address of its pod. */
export const REDIS_PORT = 6379;

/**
 * The entrypoint: the server in the foreground, a password required of every client. The
 * config comes on stdin (`redis-server -`, read when `-` is the first argument) so that the
 * password is not on the command line, which `ps` on the node shows; in a double-quoted config
 * value `\` and `"` are escaped, and a line break would end the directive, so it is refused.
 * Protected mode is off because a password is always set and the server is meant to be reached
 * from other pods; `bind * -::*` listens on every IPv4 address and, where the pod has IPv6, every
 * IPv6 one (the `-` lets that one fail). Arguments are more directives (`--appendonly yes`).
 */
export const REDIS_ENTRYPOINT = `#!/bin/sh
set -e
: "\${REDIS_PASSWORD:?REDIS_PASSWORD must be set}"
case "$REDIS_PASSWORD" in
*"
"*)
  echo "REDIS_PASSWORD must be one line" >&2
  exit 1
  ;;
esac
password=$(printf '%s' "$REDIS_PASSWORD" | sed 's/[\\\\"]/\\\\&/g')
exec redis-server - "$@" <<EOF
requirepass "$password"
bind * -::*
port ${REDIS_PORT}
protected-mode no
dir /data
EOF
`;

/**
 * `klutch.local/redis`: a key-value data service for the a9s service-type tests, from this
 * machine's Debian 12 package `redis-server` (Redis 7.0; host/scripts/setup.sh installs it, and
 * keeps the host from running it). a9s's keyvalue type is Valkey, a fork of Redis 7.2 that speaks
 * the same protocol (RESP, AUTH, the same commands), and bookworm packages no Valkey: Redis 7.0
 * is what this release has that a Valkey client talks to.
 *
 * - `redis-server` (in Debian a link to `redis-check-rdb`, one binary that picks its role by the
 *   name it runs as: copied here under the server's name) and `redis-cli`, the client the tests
 *   run from an app cluster's pod, with their libraries;
 * - `/bin/sh` (dash) and `sed` for the entrypoint, which turns REDIS_PASSWORD into `requirepass`;
 * - user `redis` (uid 999, as the official image), data in /data.
 *
 * TLS is not set up: Debian's build links OpenSSL, so `--tls-port` with `--tls-cert-file`,
 * `--tls-key-file` and `--tls-ca-cert-file` (a mounted Secret) can be passed as arguments later.
 */
export function redisSpec(repository: string): ImageSpec {
  return {
    repository,
    // Without the Debian epoch ("5:" of 5:7.0.15-1~deb12u10), which a tag would show as "5_".
    version: debianVersion("redis-server").replace(/^\d+:/, ""),
    config: {
      Entrypoint: ["/usr/local/bin/docker-entrypoint.sh"],
      Env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
      User: `${REDIS_UID}:${REDIS_UID}`,
      WorkingDir: "/data",
    },
    entries: [
      ...hostFiles([
        { path: "/usr/bin/redis-server" },
        { path: "/usr/bin/redis-cli" },
        { path: "/bin/dash" },
        { path: "/bin/sed" },
      ]),
      { type: "symlink", path: "/bin/sh", target: "dash" },
      ...userEntries([{ name: "redis", uid: REDIS_UID, home: "/data" }]),
      {
        type: "content",
        path: "/usr/local/bin/docker-entrypoint.sh",
        mode: 0o755,
        content: REDIS_ENTRYPOINT,
      },
      { type: "dir", path: "/data", mode: 0o777 },
    ],
  };
}
