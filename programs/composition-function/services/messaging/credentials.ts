/**
 * a9s Messaging's (RabbitMQ's) binding credentials: `http_api_uri`/`http_api_uris` (the
 * management API), and per protocol a nested group flattened as `protocols.<protocol>.host`,
 * `.hosts`, `.port`, `.uri`, `.uris` (e.g. `protocols.amqp_ssl.uri` amqps://user:pw@h:5671);
 * upstream's endpoints are the HTTP API, AMQP SSL and Management URIs (extractMessagingEndpoints
 * in provider-anynines servicebinding.go, anynines/klutchio 0b4539e). Top-level `host`, `hosts`
 * and `port` remain when the broker sends them and no protocol repeats them
 * (ReplaceRootKeyWithNestedKey in pkg/utils/flattenmap.go).
 */
import type { Reference } from "../contract/references.js";
import type { DataServiceCredentials } from "../contract/shape.js";

/** Upstream's labels and RabbitMQ's default ports per protocol group. */
const PROTOCOLS: Readonly<Record<string, { label: string; port?: number }>> = {
  amqp: { label: "AMQP", port: 5672 },
  amqp_ssl: { label: "AMQP SSL", port: 5671 },
  management: { label: "Management", port: 15672 },
  management_ssl: { label: "Management SSL", port: 15671 },
  mqtt: { label: "MQTT", port: 1883 },
  mqtt_ssl: { label: "MQTT SSL", port: 8883 },
  stomp: { label: "STOMP", port: 61613 },
  stomp_ssl: { label: "STOMP SSL", port: 61614 },
};

function group(prefix: string, label: string, defaultPort: number | undefined): Reference[] {
  const port = { label, ...(defaultPort !== undefined ? { defaultPort } : {}) };
  return [
    { kind: "host", key: `${prefix}host`, portKey: `${prefix}port`, ...port },
    { kind: "hosts", key: `${prefix}hosts`, portKey: `${prefix}port`, ...port },
    { kind: "url", key: `${prefix}uri`, ...port },
    { kind: "urls", key: `${prefix}uris`, ...port },
  ];
}

export const messaging: DataServiceCredentials = {
  type: "messaging",
  instanceType: "RabbitMQ",
  references(keys) {
    const protocols = [
      ...new Set(keys.map((k) => /^protocols\.([^.]+)\./.exec(k)?.[1]).filter((p) => p !== undefined)),
    ].sort();
    return [
      { kind: "url", key: "http_api_uri", defaultPort: 15672, label: "HTTP API" },
      { kind: "urls", key: "http_api_uris", defaultPort: 15672, label: "HTTP API" },
      ...protocols.flatMap((p) => group(`protocols.${p}.`, PROTOCOLS[p]?.label ?? p, PROTOCOLS[p]?.port)),
      ...group("", "AMQP", 5672),
    ];
  },
};
