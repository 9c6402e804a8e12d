import { strict as assert } from "node:assert";
import { apiServerEndpoints } from "./api-endpoints";

describe("the kubernetes Service's endpoints a node publishes", () => {
  it("are what the API server's lease reconciler writes: skip-mirror Endpoints and a service-name EndpointSlice", () => {
    const { endpoints, endpointSlice } = apiServerEndpoints("172.30.1.1", 40123);
    assert.deepEqual(endpoints, {
      apiVersion: "v1",
      kind: "Endpoints",
      metadata: {
        name: "kubernetes",
        namespace: "default",
        labels: { "endpointslice.kubernetes.io/skip-mirror": "true" },
      },
      subsets: [
        { addresses: [{ ip: "172.30.1.1" }], ports: [{ name: "https", port: 40123, protocol: "TCP" }] },
      ],
    });
    assert.deepEqual(endpointSlice, {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: {
        name: "kubernetes",
        namespace: "default",
        labels: { "kubernetes.io/service-name": "kubernetes" },
      },
      addressType: "IPv4",
      endpoints: [{ addresses: ["172.30.1.1"], conditions: { ready: true } }],
      ports: [{ name: "https", port: 40123, protocol: "TCP" }],
    });
  });

  it("refuse a loopback address (the Endpoints API would) and a port out of range", () => {
    assert.throws(() => apiServerEndpoints("127.0.0.1", 6443), /non-loopback IPv4 address, not "127.0.0.1"/);
    assert.throws(() => apiServerEndpoints("172.30.1.1", 0), /port 0 is not a TCP port/);
  });
});
