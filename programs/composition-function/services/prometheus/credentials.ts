/**
 * a9s Prometheus' binding credentials: lists of URLs for each of its servers
 * (`prometheus_urls`, `alertmanager_urls`, `grafana_urls`, like
 * `[http://h:9090/service-instances/<id>/prometheus/]`) and the Graphite exporters' hosts with
 * their one port (`graphite_exporters`, `graphite_exporter_port`): upstream's four endpoints,
 * labelled Prometheus, Alertmanager, Grafana and Graphite Exporter (provider-anynines
 * servicebinding.go, anynines/klutchio 0b4539e).
 */
import type { DataServiceCredentials } from "../contract/shape.js";

export const prometheus: DataServiceCredentials = {
  type: "prometheus",
  instanceType: "Prometheus",
  references: () => [
    { kind: "urls", key: "prometheus_urls", defaultPort: 9090, label: "Prometheus", required: true },
    { kind: "urls", key: "alertmanager_urls", defaultPort: 9093, label: "Alertmanager" },
    { kind: "urls", key: "grafana_urls", defaultPort: 3000, label: "Grafana" },
    {
      kind: "hosts",
      key: "graphite_exporters",
      portKey: "graphite_exporter_port",
      defaultPort: 9109,
      label: "Graphite Exporter",
    },
  ],
};
