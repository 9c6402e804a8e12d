import * as fs from "node:fs";
import { debianVersion, hostFiles, hostTree, librariesOf, userEntries } from "./host-rootfs";
import type { ImageSpec, LayerEntry } from "./oci-layout";

/** The uid of the official RabbitMQ image's `rabbitmq` user (Debian's is a system uid picked at install). */
export const RABBITMQ_UID = 999;
/** AMQP 0-9-1, on every address of its pod. */
export const RABBITMQ_AMQP_PORT = 5672;
/** The management plugin's HTTP API (and UI), on every address of its pod. */
export const RABBITMQ_MANAGEMENT_PORT = 15672;
/** The broker's node name: `localhost`, not the pod's name, which need not resolve in the pod. */
export const RABBITMQ_NODENAME = "rabbit@localhost";

const HOME = "/var/lib/rabbitmq";
const ERLANG = "/usr/lib/erlang";
const RABBITMQ = "/usr/lib/rabbitmq";

/** Both listeners on their default (every) address; logs go to the console (RABBITMQ_LOGS=-). */
export const RABBITMQ_CONFIG = `listeners.tcp.default = ${RABBITMQ_AMQP_PORT}
management.tcp.port = ${RABBITMQ_MANAGEMENT_PORT}
`;

/**
 * The first start's user: RabbitMQ creates `default_user` with `default_pass` (administrator, on
 * vhost /) when its database is new, and ignores both afterwards. They go in an advanced.config
 * (Erlang terms: in a quoted binary only `\` and `"` need escaping, and `/utf8` keeps non-ASCII
 * text as UTF-8) written with umask 077 to /tmp, not on the broker's command line, which `ps` on
 * the node shows; RABBITMQ_DEFAULT_PASS is unset before the broker starts. A later start, on a
 * database that exists, needs neither variable. `rabbitmq-server` (the script in
 * /usr/lib/rabbitmq/bin, not /usr/sbin's wrapper, which wants root and logs to files) runs the VM
 * in the foreground, turns SIGTERM into a clean stop, and the VM starts epmd. Erlang writes the
 * cookie ($HOME/.erlang.cookie, mode 0400) at the first start. Arguments go to `erl`.
 */
export const RABBITMQ_ENTRYPOINT = `#!/bin/sh
set -e
umask 077
config=\${RABBITMQ_ADVANCED_CONFIG_FILE:-/tmp/advanced.config}
if [ -d "\${RABBITMQ_MNESIA_BASE:?}/\${RABBITMQ_NODENAME:?}" ]; then
  echo "[]." > "$config"
else
  : "\${RABBITMQ_DEFAULT_USER:?RABBITMQ_DEFAULT_USER must be set}"
  : "\${RABBITMQ_DEFAULT_PASS:?RABBITMQ_DEFAULT_PASS must be set}"
  user=$(printf '%s' "$RABBITMQ_DEFAULT_USER" | sed 's/[\\\\"]/\\\\&/g')
  pass=$(printf '%s' "$RABBITMQ_DEFAULT_PASS" | sed 's/[\\\\"]/\\\\&/g')
  cat > "$config" <<EOF
[{rabbit, [{default_user, <<"$user"/utf8>>}, {default_pass, <<"$pass"/utf8>>}]}].
EOF
fi
unset RABBITMQ_DEFAULT_PASS
export RABBITMQ_ADVANCED_CONFIG_FILE="$config"
umask 027
exec rabbitmq-server "$@"
`;

/**
 * Hard links of one file as symlinks to its first name: the CLI's escripts (rabbitmqctl,
 * rabbitmq-diagnostics, … in escript/) are seven links of one 2 MB file in Debian's package,
 * which a layer of copies would hold seven times. Each is run by its path (`erl -run escript`,
 * rabbitmq-env's run_escript), which the link keeps; only the content is shared.
 */
export function linksAsSymlinks(entries: LayerEntry[]): LayerEntry[] {
  const first = new Map<string, string>();
  return entries.map((e) => {
    if (e.type !== "file") return e;
    const st = fs.statSync(e.source);
    if (st.nlink < 2) return e;
    const key = `${st.dev}:${st.ino}`;
    const target = first.get(key);
    if (target === undefined) {
      first.set(key, e.path);
      return e;
    }
    const sameDir = target.slice(0, target.lastIndexOf("/")) === e.path.slice(0, e.path.lastIndexOf("/"));
    return {
      type: "symlink",
      path: e.path,
      target: sameDir ? target.slice(target.lastIndexOf("/") + 1) : target,
    };
  });
}

/**
 * `klutch.local/rabbitmq`: a messaging data service for the a9s service-type tests (a9s Messaging
 * is RabbitMQ), from this machine's Debian 12 package `rabbitmq-server` (3.10) on its Erlang/OTP
 * 25 (host/scripts/setup.sh installs it, and keeps the host from running it or epmd):
 *
 * - Erlang's runtime (/usr/lib/erlang: erts with epmd, the boot files and the OTP applications
 *   RabbitMQ loads), without sources, headers and examples, and without snmp, ftp, tftp and
 *   erl_interface (C nodes), which the running broker never loaded (the smoke test runs it);
 * - RabbitMQ with every plugin Debian ships (any can be enabled) but the web examples,
 *   `enabled_plugins` with the management plugin, and the CLI (rabbitmqctl, rabbitmq-diagnostics);
 * - the clients the tests run from an app cluster's pod: amqp-tools (amqp-publish, amqp-get, …)
 *   and curl for the management API, with their libraries;
 * - dash with the commands the entrypoint, RabbitMQ's and Erlang's scripts run (cat, sed, dirname, basename, readlink,
 *   date, expr), `df` for the disk monitor and `getconf` for the memory page size; /etc/hosts for `localhost` (a pod's is the
 *   kubelet's); user `rabbitmq` (uid 999, as the official image), data and cookie in /var/lib/rabbitmq.
 */
export function rabbitmqSpec(repository: string): ImageSpec {
  const erts = fs.readdirSync(ERLANG).find((d) => d.startsWith("erts-"));
  if (!erts) throw new Error(`no erts under ${ERLANG}: run \`bash host/scripts/setup.sh\``);
  const unloaded = /^\/usr\/lib\/erlang\/lib\/(snmp|ftp|tftp|erl_interface)-/;
  const erlang = hostTree(ERLANG, (f) => unloaded.test(f) || /\/(src|include|doc|examples|emacs)$/.test(f));
  const rabbitmq = linksAsSymlinks(
    hostTree(RABBITMQ, (f) => /_examples-[^/]*$|\/(INSTALL|LICENSE[^/]*)$/.test(f)),
  );
  const programs = ["publish", "consume", "get", "declare-queue", "delete-queue"]
    .map((p) => `/usr/bin/amqp-${p}`)
    .concat("/usr/bin/curl", "/usr/bin/getconf")
    .concat(
      ["dash", "cat", "sed", "dirname", "basename", "readlink", "date", "expr", "df"].map((p) => `/bin/${p}`),
    );
  return {
    repository,
    version: debianVersion("rabbitmq-server"),
    config: {
      Entrypoint: ["/usr/local/bin/docker-entrypoint.sh"],
      Env: [
        `PATH=${RABBITMQ}/bin:${ERLANG}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`,
        `HOME=${HOME}`,
        `RABBITMQ_NODENAME=${RABBITMQ_NODENAME}`,
        `RABBITMQ_MNESIA_BASE=${HOME}/mnesia`,
        "RABBITMQ_LOG_BASE=/var/log/rabbitmq",
        "RABBITMQ_LOGS=-",
      ],
      User: `${RABBITMQ_UID}:${RABBITMQ_UID}`,
      WorkingDir: HOME,
    },
    entries: [
      ...erlang,
      ...librariesOf(erlang),
      ...rabbitmq,
      ...hostFiles(programs.map((p) => ({ path: p }))),
      { type: "symlink", path: "/bin/sh", target: "dash" },
      ...userEntries([{ name: "rabbitmq", uid: RABBITMQ_UID, home: HOME }]),
      { type: "content", path: "/etc/hosts", mode: 0o644, content: "127.0.0.1\tlocalhost\n::1\tlocalhost\n" },
      { type: "content", path: "/etc/rabbitmq/rabbitmq.conf", mode: 0o644, content: RABBITMQ_CONFIG },
      {
        type: "content",
        path: "/etc/rabbitmq/enabled_plugins",
        mode: 0o644,
        content: "[rabbitmq_management].\n",
      },
      {
        type: "content",
        path: "/usr/local/bin/docker-entrypoint.sh",
        mode: 0o755,
        content: RABBITMQ_ENTRYPOINT,
      },
      { type: "dir", path: HOME, mode: 0o777 },
      { type: "dir", path: "/var/log/rabbitmq", mode: 0o777 },
    ],
  };
}
