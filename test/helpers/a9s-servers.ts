/**
 * Real servers for a9s service types, from the local nodes' images (host/local-clusters/images:
 * redis-image.ts, mariadb-image.ts, prometheus-image.ts), and the credentials provider-anynines
 * would publish for them: upstream's keys for each type (anynines/klutchio 0b4539e,
 * test/e2e/<type>/manifests/servicebinding-secret.yaml), flattened as provider-anynines flattens
 * them (pkg/utils/flattenmap.go: dotted keys, lists printed as Go prints them, `[a b]`).
 *
 * Where Debian 12 packages no server (Valkey, Grafana, Graphite exporter) the nearest real one
 * stands in: Redis 7.0 for Valkey (the same protocol and ACL `AUTH user pass`), and Prometheus's
 * and Alertmanager's own HTTP servers behind the Service ports a9s gives Grafana (3000) and the
 * Graphite exporter (9109), so each of the four endpoints is a real server behind its own path.
 */

import { ALERTMANAGER_COMMAND } from "../../host/local-clusters/images/prometheus-image";

export type A9sServerType = "keyvalue" | "mariadb" | "prometheus";

interface Container {
  name: string;
  image: string;
  args?: string[];
  command?: string[];
  env?: { name: string; value: string }[];
  port: number;
}

function server(
  namespace: string,
  name: string,
  containers: Container[],
  ports: [number, number][],
): object[] {
  const labels = { app: name };
  return [
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name, namespace },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            automountServiceAccountToken: false,
            containers: containers.map((c) => ({
              name: c.name,
              image: c.image,
              imagePullPolicy: "Never",
              ...(c.command ? { command: c.command } : {}),
              ...(c.args ? { args: c.args } : {}),
              ...(c.env ? { env: c.env } : {}),
              ports: [{ containerPort: c.port }],
              readinessProbe: { tcpSocket: { port: c.port }, periodSeconds: 2 },
            })),
          },
        },
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace },
      spec: {
        selector: labels,
        ports: ports.map(([port, targetPort]) => ({ name: `p${port}`, port, targetPort })),
      },
    },
  ];
}

/** The Deployment and Service of each server, and the broker's credentials naming them. */
export function a9sServer(
  type: A9sServerType,
  o: { namespace: string; images: Record<string, string>; password: string; cacrt: string },
): { manifests: object[]; host: string; credentials: Record<string, string> } {
  const host = `${type}.${o.namespace}.svc.cluster.local`;
  if (type === "keyvalue") {
    return {
      host,
      manifests: server(
        o.namespace,
        type,
        [
          {
            name: "redis",
            image: o.images.redis!,
            env: [{ name: "REDIS_PASSWORD", value: o.password }],
            port: 6379,
          },
        ],
        [[6379, 6379]],
      ),
      credentials: {
        cacrt: o.cacrt,
        host,
        hosts: `[${host}]`,
        load_balanced_host: host,
        "valkey.password": o.password,
        "valkey.port": "6379",
        "valkey.username": "default",
      },
    };
  }
  if (type === "mariadb") {
    return {
      host,
      manifests: server(
        o.namespace,
        type,
        [
          {
            name: "mariadb",
            image: o.images.mariadb!,
            env: [{ name: "MARIADB_ROOT_PASSWORD", value: o.password }],
            // The node's memory: InnoDB's 128 MiB default pool is for a real workload.
            args: ["--innodb-buffer-pool-size=16M"],
            port: 3306,
          },
        ],
        [[3306, 3306]],
      ),
      credentials: {
        cacrt: o.cacrt,
        host,
        hosts: `[${host}]`,
        name: "mysql",
        password: o.password,
        port: "3306",
        uri: `mysql://root:${encodeURIComponent(o.password)}@${host}:3306/mysql`,
        username: "root",
      },
    };
  }
  return {
    host,
    manifests: server(
      o.namespace,
      type,
      [
        { name: "prometheus", image: o.images.prometheus!, port: 9090 },
        {
          name: "alertmanager",
          image: o.images.prometheus!,
          command: ALERTMANAGER_COMMAND,
          port: 9093,
        },
      ],
      // Grafana's and the Graphite exporter's ports, served by Prometheus and Alertmanager.
      [
        [9090, 9090],
        [9093, 9093],
        [3000, 9090],
        [9109, 9093],
      ],
    ),
    credentials: {
      alertmanager_urls: `[http://${host}:9093]`,
      grafana_urls: `[http://${host}:3000]`,
      graphite_exporter_port: "9109",
      graphite_exporters: `[${host}]`,
      password: o.password,
      prometheus_urls: `[http://${host}:9090]`,
      username: "admin",
    },
  };
}
