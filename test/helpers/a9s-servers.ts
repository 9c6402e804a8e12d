/**
 * Real servers for a9s service types, from the local nodes' images (host/local-clusters/images:
 * redis-image.ts, mariadb-image.ts, prometheus-image.ts, rabbitmq-image.ts), with the credentials
 * provider-anynines would publish for them (a9s-credentials.ts).
 *
 * Where Debian 12 packages no server (Valkey, Grafana, Graphite exporter, MongoDB) the nearest
 * real one stands in: Redis 7.0 for Valkey (the same protocol and ACL `AUTH user pass`), and
 * Prometheus's and Alertmanager's own HTTP servers behind the Service ports a9s gives Grafana
 * (3000) and the Graphite exporter (9109), so each of the four endpoints is a real server behind
 * its own path. MongoDB's three replica set members are three Services on port 27017, each a
 * name of its own in front of one Redis server: no MongoDB client runs here, but each member's
 * path is proven to reach a real server that checks the password.
 */

import { ALERTMANAGER_COMMAND } from "../../host/local-clusters/images/prometheus-image";
import { a9sCredentials, type A9sServerType } from "./a9s-credentials";

export type { A9sServerType };

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
  serviceNames: readonly string[],
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
    ...serviceNames.map((service) => ({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: service, namespace },
      spec: {
        selector: labels,
        ports: ports.map(([port, targetPort]) => ({ name: `p${port}`, port, targetPort })),
      },
    })),
  ];
}

/** Each type's containers, and its Service's ports (port → the container's port). */
function workload(
  type: A9sServerType,
  images: Record<string, string>,
  password: string,
): { containers: Container[]; ports: [number, number][] } {
  switch (type) {
    case "mongodb":
      return {
        containers: [
          {
            name: "member",
            image: images.redis!,
            env: [{ name: "REDIS_PASSWORD", value: password }],
            port: 6379,
          },
        ],
        ports: [[27017, 6379]],
      };
    case "keyvalue":
      return {
        containers: [
          {
            name: "redis",
            image: images.redis!,
            env: [{ name: "REDIS_PASSWORD", value: password }],
            port: 6379,
          },
        ],
        ports: [[6379, 6379]],
      };
    case "mariadb":
      return {
        containers: [
          {
            name: "mariadb",
            image: images.mariadb!,
            env: [{ name: "MARIADB_ROOT_PASSWORD", value: password }],
            // The node's memory: InnoDB's 128 MiB default pool is for a real workload.
            args: ["--innodb-buffer-pool-size=16M"],
            port: 3306,
          },
        ],
        ports: [[3306, 3306]],
      };
    case "messaging":
      return {
        containers: [
          {
            name: "rabbitmq",
            image: images.rabbitmq!,
            env: [
              { name: "RABBITMQ_DEFAULT_USER", value: "klutch" },
              { name: "RABBITMQ_DEFAULT_PASS", value: password },
            ],
            port: 5672,
          },
        ],
        ports: [
          [5672, 5672],
          [15672, 15672],
        ],
      };
    case "prometheus":
      return {
        containers: [
          { name: "prometheus", image: images.prometheus!, port: 9090 },
          { name: "alertmanager", image: images.prometheus!, command: ALERTMANAGER_COMMAND, port: 9093 },
        ],
        // Grafana's and the Graphite exporter's ports, served by Prometheus and Alertmanager.
        ports: [
          [9090, 9090],
          [9093, 9093],
          [3000, 9090],
          [9109, 9093],
        ],
      };
  }
}

/** The Deployment and Services of a type's server, and the broker's credentials naming them. */
export function a9sServer(
  type: A9sServerType,
  o: { namespace: string; images: Record<string, string>; password: string; cacrt: string },
): { manifests: object[]; host: string; credentials: Record<string, string> } {
  const { containers, ports } = workload(type, o.images, o.password);
  // MongoDB: three members, each a Service of its own name in front of the same server.
  const names = type === "mongodb" ? [0, 1, 2].map((i) => `${type}-${i}`) : [type];
  const manifests = server(o.namespace, type, containers, ports, names);
  const hosts = names.map((n) => `${n}.${o.namespace}.svc.cluster.local`);
  return {
    host: hosts[0]!,
    manifests,
    credentials: a9sCredentials(type, hosts, o.password, o.cacrt),
  };
}
