import { debianVersion, hostFiles, hostTree, librariesOf, userEntries } from "./host-rootfs";
import type { ImageSpec, LayerEntry } from "./oci-layout";

/** The uid of upstream's Prometheus and Alertmanager images' user, `nobody`. */
export const PROMETHEUS_UID = 65534;
export const PROMETHEUS_PORT = 9090;
export const ALERTMANAGER_PORT = 9093;

const ALERTMANAGER_SHARE = "/usr/share/prometheus/alertmanager";

/** Prometheus scrapes itself and sends alerts to an Alertmanager beside it in the pod. */
export const PROMETHEUS_CONFIG = `global:
  scrape_interval: 5s
  evaluation_interval: 5s
alerting:
  alertmanagers:
    - static_configs:
        - targets: ["127.0.0.1:${ALERTMANAGER_PORT}"]
scrape_configs:
  - job_name: prometheus
    static_configs:
      - targets: ["127.0.0.1:${PROMETHEUS_PORT}"]
`;

/** Every alert to one receiver that sends nothing. */
export const ALERTMANAGER_CONFIG = `route:
  receiver: "null"
receivers:
  - name: "null"
`;

/**
 * The Alertmanager container's command (the image's entrypoint is Prometheus): upstream's
 * defaults, and no cluster listener (`--cluster.listen-address=` empty): a single Alertmanager has
 * no peers to gossip with on 9094, and with clustering on it refuses to start where it finds no
 * private address to advertise ("Failed to get final advertise address", seen in the smoke test's
 * network namespace, which has loopback only).
 */
export const ALERTMANAGER_COMMAND = [
  "/bin/alertmanager",
  "--config.file=/etc/alertmanager/alertmanager.yml",
  "--storage.path=/alertmanager",
  `--web.listen-address=:${ALERTMANAGER_PORT}`,
  "--cluster.listen-address=",
];

/**
 * `klutch.local/prometheus`: a monitoring data service for the a9s service-type tests (a9s
 * Prometheus: Prometheus with Alertmanager), from this machine's Debian 12 packages `prometheus`
 * (2.42) and `prometheus-alertmanager` (0.25) (host/scripts/setup.sh installs them, and keeps the
 * host from running them). Laid out like upstream's two images: `prometheus` and `promtool`,
 * `alertmanager` and `amtool` in /bin, configs in /etc/prometheus and /etc/alertmanager, data in
 * /prometheus and /alertmanager, user `nobody`. The tests' clients are `promtool query instant`
 * and `amtool`.
 *
 * One image, not an `alertmanager` beside it: every node imports every image, and a second one
 * would be a second archive to build, import and keep for the same bytes (Alertmanager and amtool
 * are 43 of its MB); an instance's pod runs both containers from it (ALERTMANAGER_COMMAND).
 *
 * Debian builds these Go programs with cgo, so they load libc (librariesOf); upstream's are
 * static. Debian's classic web UI (/usr/share/prometheus/web) is left out: the HTTP API needs none.
 */
export function prometheusSpec(repository: string): ImageSpec {
  const programs: LayerEntry[] = (
    [
      ["prometheus", "prometheus"],
      ["promtool", "promtool"],
      ["alertmanager", "prometheus-alertmanager"],
      ["amtool", "amtool"],
    ] as const
  ).map(([name, source]) => ({
    type: "file",
    path: `/bin/${name}`,
    mode: 0o755,
    source: `/usr/bin/${source}`,
  }));
  return {
    repository,
    version: `${debianVersion("prometheus")}-alertmanager${debianVersion("prometheus-alertmanager")}`,
    config: {
      Entrypoint: ["/bin/prometheus"],
      Cmd: [
        "--config.file=/etc/prometheus/prometheus.yml",
        "--storage.tsdb.path=/prometheus",
        `--web.listen-address=:${PROMETHEUS_PORT}`,
      ],
      Env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
      User: `${PROMETHEUS_UID}:${PROMETHEUS_UID}`,
      WorkingDir: "/prometheus",
    },
    entries: [
      ...programs,
      ...librariesOf(programs),
      // A shell for a client pod's script (the e2e reads each URL out of a binding's Go-printed
      // list, `[http://h:9090]`, before handing it to promtool or amtool).
      ...hostFiles([{ path: "/bin/dash" }]),
      { type: "symlink", path: "/bin/sh", target: "dash" },
      // Debian's Alertmanager reads its default notification templates (default.tmpl,
      // email.tmpl) from here, where upstream's has them built in; without them every config
      // load fails ("failed to parse templates") and it never listens.
      ...hostTree(ALERTMANAGER_SHARE, (f) => !f.endsWith(".tmpl")),
      ...userEntries([{ name: "nobody", uid: PROMETHEUS_UID, home: "/home" }]),
      { type: "content", path: "/etc/prometheus/prometheus.yml", mode: 0o644, content: PROMETHEUS_CONFIG },
      {
        type: "content",
        path: "/etc/alertmanager/alertmanager.yml",
        mode: 0o644,
        content: ALERTMANAGER_CONFIG,
      },
      { type: "dir", path: "/prometheus", mode: 0o777 },
      { type: "dir", path: "/alertmanager", mode: 0o777 },
    ],
  };
}
