import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { which } from "../host/binaries";
import { debianPostgres, debianVersion, hostFiles, hostTree, librariesOf, userEntries } from "./host-rootfs";
import { buildImage, type BuiltImage, type ImageSpec } from "./oci-layout";
import { bridgeSpec } from "./bridge-image";
import { repoRoot } from "../../automation/toolchain";
import { wireguardSpec } from "./wireguard-image";
import { crossplaneSpec } from "./crossplane-image";
import { redisSpec } from "./redis-image";
import { mariadbSpec } from "./mariadb-image";
import { prometheusSpec } from "./prometheus-image";
import { rabbitmqSpec } from "./rabbitmq-image";

/**
 * The images local nodes run, built on this machine (see host-rootfs.ts for why from host
 * binaries) and cached by content in ~/.cache/klutch-pulumi/images: the archive's name is the
 * manifest digest, so a changed binary, library or config makes a new image and tag.
 */

export const IMAGE_REPOSITORY = "klutch.local";

/** The uid of the official HAProxy image's `haproxy` user, which the TcpProxy pods run as. */
export const HAPROXY_UID = 99;
/** The uid of upstream CoreDNS images' `nonroot` user, which the cluster DNS runs as. */
export const COREDNS_UID = 65532;

const PATH_ENV = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

export function imageCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache");
  return env.KLUTCH_IMAGE_CACHE ?? path.join(base, "klutch-pulumi", "images");
}

function find(name: string, env: NodeJS.ProcessEnv): string {
  const found = which(name, env);
  if (!found) throw new Error(`${name} not found on PATH: run \`bash host/scripts/setup.sh\``);
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
 * The cluster DNS (host/local-clusters/node/cluster-dns.ts): the static `coredns` the toolchain
 * builds (host/toolchain/coredns), tagged with the version it reports, run as upstream's `nonroot`.
 */
export function corednsSpec(env: NodeJS.ProcessEnv): ImageSpec {
  const coredns = find("coredns", env);
  const said = execFileSync(coredns, ["-version"], { encoding: "utf8", env });
  const version = /CoreDNS-(\S+)/.exec(said)?.[1];
  if (!version) throw new Error(`${coredns} -version printed no CoreDNS version: ${said.trim()}`);
  return {
    repository: `${IMAGE_REPOSITORY}/coredns`,
    version,
    config: { Entrypoint: ["/coredns"], User: `${COREDNS_UID}:${COREDNS_UID}` },
    entries: [
      { type: "file", path: "/coredns", mode: 0o755, source: coredns },
      ...userEntries([{ name: "nonroot", uid: COREDNS_UID, home: "/home/nonroot" }]),
    ],
  };
}

/**
 * HAProxy from Debian's package (the one the data-plane tests run), laid out like the
 * official image the TcpProxy component expects: `haproxy` on PATH, the config directory
 * /usr/local/etc/haproxy (a ConfigMap is mounted there), user `haproxy` with uid 99, and its
 * `STOPSIGNAL SIGUSR1` (docker-library/haproxy, 2.6/Dockerfile): HAProxy's graceful stop
 * (management.txt, "Stopping and restarting HAProxy"). HAProxy installs no SIGTERM handler, and
 * the kernel drops an unhandled signal to a PID namespace's init, so with the default SIGTERM a
 * proxy pod ignored its stop and was killed only after its 30 s grace period (measured: 31.9 s
 * to delete one; a group's stack destroy took 35.6 s).
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
      StopSignal: "SIGUSR1",
    },
    entries: [
      ...hostFiles([{ path: "/usr/sbin/haproxy" }]),
      ...userEntries([{ name: "haproxy", uid: HAPROXY_UID, home: "/var/lib/haproxy" }]),
      { type: "dir", path: "/usr/local/etc/haproxy" },
      { type: "dir", path: "/var/lib/haproxy" },
    ],
  };
}

/** The uid of the official PostgreSQL image's `postgres` user. */
export const POSTGRES_UID = 999;

// Like the official image's entrypoint, reduced to what the tests and a dev data service need:
// a first start runs initdb (password from POSTGRES_PASSWORD, scram for TCP clients), every
// start then runs the server in the foreground.
const POSTGRES_ENTRYPOINT = `#!/bin/sh
set -e
: "\${PGDATA:=/var/lib/postgresql/data/pgdata}"
export PGDATA
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  printf '%s' "\${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set}" > /tmp/pwfile
  initdb --username=postgres --pwfile=/tmp/pwfile --auth-local=trust --auth-host=scram-sha-256 \\
    --no-locale --encoding=UTF8 >/dev/null
  : > /tmp/pwfile
  echo "host all all 0.0.0.0/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
fi
exec postgres -c listen_addresses='*' -c unix_socket_directories=/tmp "$@"
`;

/**
 * PostgreSQL from Debian's package, the release's major (debianPostgres; the one the data-plane
 * tests run): the server, initdb, psql, pg_isready, pgbench (benchmarks from a consumer pod), and
 * pg_dump and pg_restore (the local backend's Backup and Restore) with the modules and share files they load,
 * tz data, and /bin/sh for initdb (it starts the server through the shell). Runs as uid 999 with its data in PGDATA.
 */
export function postgresSpec(): ImageSpec {
  const { dir: PG, share, pkg } = debianPostgres();
  const bins = ["postgres", "initdb", "pg_ctl", "pg_isready", "psql", "pgbench", "pg_dump", "pg_restore"].map(
    (b) => ({
      path: `${PG}/bin/${b}`,
    }),
  );
  const modules = hostTree(`${PG}/lib`, (f) => f.includes("/bitcode") || f.includes("llvmjit"));
  const shared = [...hostTree(share, (f) => f.endsWith("/man")), ...hostTree("/usr/share/zoneinfo")];
  return {
    repository: `${IMAGE_REPOSITORY}/postgres`,
    version: debianVersion(pkg),
    config: {
      Entrypoint: ["/usr/local/bin/docker-entrypoint.sh"],
      Env: [
        `PATH=${PG}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
        "PGDATA=/var/lib/postgresql/data/pgdata",
      ],
      User: `${POSTGRES_UID}:${POSTGRES_UID}`,
    },
    entries: [
      // sleep: dash has no builtin one, and the local backend's backup store waits with it.
      ...hostFiles([...bins, { path: "/bin/dash" }, { path: "/bin/sleep" }]),
      { type: "symlink", path: "/bin/sh", target: "dash" },
      ...modules,
      ...librariesOf(modules),
      ...shared,
      ...userEntries([{ name: "postgres", uid: POSTGRES_UID, home: "/var/lib/postgresql" }]),
      {
        type: "content",
        path: "/usr/local/bin/docker-entrypoint.sh",
        mode: 0o755,
        content: POSTGRES_ENTRYPOINT,
      },
      { type: "dir", path: "/var/lib/postgresql/data", mode: 0o777 },
      { type: "dir", path: "/var/run/postgresql", mode: 0o777 },
    ],
  };
}

export const IMAGE_NAMES = [
  "pause",
  "coredns",
  "haproxy",
  "postgres",
  "redis",
  "mariadb",
  "prometheus",
  "rabbitmq",
  "wireguard",
  "bridge",
  "crossplane",
] as const;
export type ImageName = (typeof IMAGE_NAMES)[number];

export type BuiltImages = Record<ImageName, BuiltImage>;

/**
 * Builds running now, by cache dir. `npm run clusters -- up` starts every cluster's node at
 * once, and each asks for the same images: they share one build rather than race three writers
 * of the same archive (found when the bridge image's sources changed between two `up`s).
 */
const building = new Map<string, Promise<BuiltImages>>();

/** Builds (or finds in the cache) every image a node imports. */
export function buildNodeImages(env: NodeJS.ProcessEnv, cacheDir = imageCacheDir(env)): Promise<BuiltImages> {
  const running = building.get(cacheDir);
  if (running) return running;
  // Forgotten once settled: a later call hashes the sources again (they may have changed).
  const build = buildEach(env, cacheDir).finally(() => building.delete(cacheDir));
  building.set(cacheDir, build);
  return build;
}

async function buildEach(env: NodeJS.ProcessEnv, cacheDir: string): Promise<BuiltImages> {
  // One after another: they read the same disk, and a failure leaves no other build half-written.
  const pause = await buildImage(pauseSpec(env), cacheDir);
  const coredns = await buildImage(corednsSpec(env), cacheDir);
  const haproxy = await buildImage(haproxySpec(), cacheDir);
  const postgres = await buildImage(postgresSpec(), cacheDir);
  // The data services besides PostgreSQL that the a9s service types' tests run (redis-image.ts,
  // mariadb-image.ts, prometheus-image.ts, rabbitmq-image.ts).
  const redis = await buildImage(redisSpec(`${IMAGE_REPOSITORY}/redis`), cacheDir);
  const mariadb = await buildImage(mariadbSpec(`${IMAGE_REPOSITORY}/mariadb`), cacheDir);
  const prometheus = await buildImage(prometheusSpec(`${IMAGE_REPOSITORY}/prometheus`), cacheDir);
  const rabbitmq = await buildImage(rabbitmqSpec(`${IMAGE_REPOSITORY}/rabbitmq`), cacheDir);
  const wireguard = await buildImage(wireguardSpec(`${IMAGE_REPOSITORY}/wireguard`), cacheDir);
  const bridge = await buildImage(bridgeSpec(env, repoRoot, cacheDir), cacheDir);
  const crossplane = await buildImage(crossplaneSpec(`${IMAGE_REPOSITORY}/crossplane`, env), cacheDir);
  return {
    pause,
    coredns,
    haproxy,
    postgres,
    redis,
    mariadb,
    prometheus,
    rabbitmq,
    wireguard,
    bridge,
    crossplane,
  };
}
