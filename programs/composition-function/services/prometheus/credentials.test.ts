import { strict as assert } from "node:assert";
import { endpointList, throughPaths } from "../../test-helpers.js";
import { prometheus } from "./credentials.js";

// provider-anynines' Prometheus fixture (servicebinding_test.go, anynines/klutchio 0b4539e).
const ID = "a73888f1-211d-440c-b8ef-ea89e1e36608-1747054677";
const SECRET = {
  alertmanager_urls: `[http://hsdxxxxxx-alertmanager-0.node.dc1.dsf2.a9ssvc:9093/service-instances/${ID}/alertmanager/]`,
  grafana_urls: `[http://hsdxxxxxx-grafana-0.node.dc1.dsf2.a9ssvc:3000/service-instances/${ID}/grafana/]`,
  graphite_exporter_port: "9109",
  graphite_exporters: "[hsdxxxxxx-prometheus-0.node.dc1.dsf2.a9ssvc]",
  password: "pw",
  prometheus_urls: `[http://hsdxxxxxx-prometheus-0.node.dc1.dsf2.a9ssvc:9090/service-instances/${ID}/prometheus/]`,
  username: "admin",
};
const PATHS = {
  "hsdxxxxxx-prometheus-0.node.dc1.dsf2.a9ssvc:9090": "np.app:30061",
  "hsdxxxxxx-alertmanager-0.node.dc1.dsf2.a9ssvc:9093": "np.app:30062",
  "hsdxxxxxx-grafana-0.node.dc1.dsf2.a9ssvc:3000": "np.app:30063",
  "hsdxxxxxx-prometheus-0.node.dc1.dsf2.a9ssvc:9109": "np.app:30064",
};

describe("data service prometheus: credentials", () => {
  it("names upstream's four endpoints", () => {
    assert.deepEqual(endpointList(throughPaths(prometheus, SECRET, PATHS).endpoints), [
      "Prometheus hsdxxxxxx-prometheus-0.node.dc1.dsf2.a9ssvc:9090",
      "Alertmanager hsdxxxxxx-alertmanager-0.node.dc1.dsf2.a9ssvc:9093",
      "Grafana hsdxxxxxx-grafana-0.node.dc1.dsf2.a9ssvc:3000",
      "Graphite Exporter hsdxxxxxx-prometheus-0.node.dc1.dsf2.a9ssvc:9109",
    ]);
  });

  it("rewrites each URL list, keeping the paths, and the exporters with their port", () => {
    assert.deepEqual(throughPaths(prometheus, SECRET, PATHS).rewritten, {
      ...SECRET,
      prometheus_urls: `[http://np.app:30061/service-instances/${ID}/prometheus/]`,
      alertmanager_urls: `[http://np.app:30062/service-instances/${ID}/alertmanager/]`,
      grafana_urls: `[http://np.app:30063/service-instances/${ID}/grafana/]`,
      graphite_exporters: "[np.app]",
      graphite_exporter_port: "30064",
    });
  });
});
