import { debianVersion, hostFiles, hostTree, userEntries } from "./host-rootfs";
import type { ImageSpec } from "./oci-layout";

/** The uid of the official MariaDB image's `mysql` user. */
export const MARIADB_UID = 999;
/** Where the server listens, on every address of its pod. */
export const MARIADB_PORT = 3306;
/** The server's socket, where the Debian-built client looks by default. */
export const MARIADB_SOCKET = "/run/mysqld/mysqld.sock";

/**
 * Like the official image's entrypoint, reduced to what the tests and a dev data service need
 * (as the PostgreSQL image's in catalog.ts). A first start runs `mariadb-install-db` into the data
 * directory (MARIADB_DATADIR, /var/lib/mysql unless set), and the SQL it runs last
 * (`--extra-file`, still in bootstrap mode, so nothing listens yet) keeps root@localhost only,
 * gives it MARIADB_ROOT_PASSWORD and adds root@'%' with the same password and every privilege, for
 * TCP clients from anywhere. The password is escaped for a quoted SQL string (`\` and `'`), and
 * the file is emptied once read, whether the install worked or not. `--force` skips the script's
 * host-name look-up (resolveip), which fails where the pod's own name does not resolve. Every
 * start then runs the server in the foreground; arguments are more server options.
 */
export const MARIADB_ENTRYPOINT = `#!/bin/sh
set -e
datadir=\${MARIADB_DATADIR:-/var/lib/mysql}
if [ ! -d "$datadir/mysql" ]; then
  : "\${MARIADB_ROOT_PASSWORD:?MARIADB_ROOT_PASSWORD must be set}"
  password=$(printf '%s' "$MARIADB_ROOT_PASSWORD" | sed "s/[\\\\\\\\']/\\\\\\\\&/g")
  init="\${TMPDIR:-/tmp}/init.sql"
  cat > "$init" <<EOF
DELETE FROM mysql.global_priv WHERE User = 'root' AND Host <> 'localhost';
DELETE FROM mysql.proxies_priv WHERE Host <> 'localhost';
FLUSH PRIVILEGES;
ALTER USER 'root'@'localhost' IDENTIFIED BY '$password';
CREATE USER 'root'@'%' IDENTIFIED BY '$password';
GRANT ALL PRIVILEGES ON *.* TO 'root'@'%' WITH GRANT OPTION;
EOF
  status=0
  mariadb-install-db --datadir="$datadir" --auth-root-authentication-method=normal --skip-test-db \\
    --force --extra-file="$init" >/dev/null || status=$?
  : > "$init"
  [ "$status" -eq 0 ] || exit "$status"
fi
exec mariadbd --datadir="$datadir" --bind-address='*' --port=${MARIADB_PORT} --socket=${MARIADB_SOCKET} \\
  --skip-name-resolve --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci "$@"
`;

/**
 * `klutch.local/mariadb`: a relational data service besides PostgreSQL for the a9s service-type
 * tests (a9s MariaDB), from this machine's Debian 12 packages (MariaDB 10.11; host/scripts/setup.sh
 * installs `mariadb-server`, and keeps the host from running it):
 *
 * - `mariadbd`, `mariadb-install-db` (a shell script that runs `my_print_defaults`, `dirname`,
 *   `uname`, `mkdir`, `chmod`, `cat` and `sed`), and `mariadb`, the client the tests run from an
 *   app cluster's pod, with their libraries;
 * - the share files: the bootstrap SQL, error messages (`errmsg.sys`) and character sets, without
 *   the Galera scripts, the benchmark and the messages' source;
 * - `/bin/sh` (dash) for the two scripts; user `mysql` (uid 999, as the official image); data in
 *   /var/lib/mysql (a volume is mounted there), the socket in /run/mysqld.
 *
 * No /etc/mysql: the entrypoint gives the server every option it needs.
 */
export function mariadbSpec(repository: string): ImageSpec {
  const programs = ["/usr/sbin/mariadbd", "/usr/bin/mariadb", "/usr/bin/my_print_defaults"].concat(
    ["dash", "sed", "dirname", "uname", "mkdir", "chmod", "cat"].map((p) => `/bin/${p}`),
  );
  const share = hostTree("/usr/share/mysql", (f) =>
    /\/(errmsg-utf8\.txt|mini-benchmark|wsrep[^/]*|debian-start\.inc\.sh|echo_stderr)$/.test(f),
  );
  return {
    repository,
    version: debianVersion("mariadb-server").replace(/^\d+:/, ""), // without the epoch, as redis-image.ts
    config: {
      Entrypoint: ["/usr/local/bin/docker-entrypoint.sh"],
      Env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
      User: `${MARIADB_UID}:${MARIADB_UID}`,
    },
    entries: [
      ...hostFiles(programs.map((p) => ({ path: p }))),
      { type: "symlink", path: "/bin/sh", target: "dash" },
      {
        type: "file",
        path: "/usr/bin/mariadb-install-db",
        mode: 0o755,
        source: "/usr/bin/mariadb-install-db",
      },
      ...share,
      ...userEntries([{ name: "mysql", uid: MARIADB_UID, home: "/var/lib/mysql" }]),
      {
        type: "content",
        path: "/usr/local/bin/docker-entrypoint.sh",
        mode: 0o755,
        content: MARIADB_ENTRYPOINT,
      },
      { type: "dir", path: "/var/lib/mysql", mode: 0o777 },
      { type: "dir", path: "/run/mysqld", mode: 0o777 },
    ],
  };
}
