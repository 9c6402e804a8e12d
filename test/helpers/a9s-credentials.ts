/**
 * The credentials provider-anynines would publish for a9s instances of each type the e2e runs a
 * real server for (test/helpers/a9s-servers.ts): upstream's keys (anynines/klutchio 0b4539e,
 * test/e2e/<type>/manifests/servicebinding-secret.yaml) with their values' shapes, flattened as
 * provider-anynines flattens them (pkg/utils/flattenmap.go: dotted keys, lists printed as Go
 * prints them, `[a b]`).
 */

export type A9sServerType = "keyvalue" | "mariadb" | "prometheus" | "messaging" | "mongodb";

/** The user a9s MongoDB's credentials name (any name: the stand-in server checks the password only). */
export const MONGODB_USER = "a9s-brk-usr";

export function a9sCredentials(
  type: A9sServerType,
  /** The instance's hosts: one, or each replica set member for MongoDB. */
  hosts: readonly string[],
  password: string,
  cacrt: string,
): Record<string, string> {
  const secret = encodeURIComponent(password);
  const host = hosts[0]!;
  switch (type) {
    case "mongodb": {
      // No host or port key: `hosts` lists every member as host:port, as does the uri's authority.
      const members = hosts.map((h) => `${h}:27017`);
      return {
        default_database: "klutch",
        hosts: `[${members.join(" ")}]`,
        password,
        uri: `mongodb://${MONGODB_USER}:${secret}@${members.join(",")}/klutch?replicaSet=rs0`,
        username: MONGODB_USER,
      };
    }
    case "keyvalue":
      return {
        cacrt,
        host,
        hosts: `[${host}]`,
        load_balanced_host: host,
        "valkey.password": password,
        "valkey.port": "6379",
        "valkey.username": "default",
      };
    case "mariadb":
      return {
        cacrt,
        host,
        hosts: `[${host}]`,
        name: "mysql",
        password,
        port: "3306",
        uri: `mysql://root:${secret}@${host}:3306/mysql`,
        username: "root",
      };
    case "messaging": {
      // A broker whose AMQP listener is plain (`protocols.amqp`), beside its management API;
      // a9s's own ships `amqp_ssl` on 5671 instead (no TLS here yet).
      const amqp = `amqp://klutch:${secret}@${host}:5672`;
      const api = `http://klutch:${secret}@${host}:15672/api/`;
      return {
        http_api_uri: api,
        http_api_uris: `[${api}]`,
        password,
        "protocols.amqp.host": host,
        "protocols.amqp.hosts": `[${host}]`,
        "protocols.amqp.port": "5672",
        "protocols.amqp.uri": amqp,
        "protocols.amqp.uris": `[${amqp}]`,
        "protocols.management.path": "/api",
        "protocols.management.uri": api,
        "protocols.management.uris": `[${api}]`,
        username: "klutch",
      };
    }
    case "prometheus":
      return {
        alertmanager_urls: `[http://${host}:9093]`,
        grafana_urls: `[http://${host}:3000]`,
        graphite_exporter_port: "9109",
        graphite_exporters: `[${host}]`,
        password,
        prometheus_urls: `[http://${host}:9090]`,
        username: "admin",
      };
  }
}
