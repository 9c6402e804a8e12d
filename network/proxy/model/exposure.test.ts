import { strict as assert } from "node:assert";
import { isPrivateCidr, serviceExposure } from "../../contract/exposure";
import { proxyExposure, ingressRule } from "./exposure";

const lb = { serviceType: "LoadBalancer" as const, publicEndpoint: false };

describe("proxy exposure (pure)", () => {
  it("admits the app cluster's egress CIDRs, else its node CIDR, else loopback for a local cluster", () => {
    const egress = proxyExposure(
      { infrastructure: "aws", network: { nodeCidr: "10.20.0.0/16", egressCidrs: ["198.51.100.7/32"] } },
      lb,
    );
    assert.deepEqual(egress, {
      ok: true,
      exposure: { sourceRanges: ["198.51.100.7/32"], internal: false, public: false },
    });
    assert.deepEqual(proxyExposure({ infrastructure: "aws", network: { nodeCidr: "10.20.0.0/16" } }, lb), {
      ok: true,
      exposure: { sourceRanges: ["10.20.0.0/16"], internal: true, public: false },
    });
    assert.deepEqual(proxyExposure({ infrastructure: "local" }, lb), {
      ok: true,
      exposure: { sourceRanges: ["127.0.0.0/8"], internal: true, public: false },
    });
  });

  it("explicit allowedSources and internal win over what is derived", () => {
    const r = proxyExposure(
      { infrastructure: "aws", network: { nodeCidr: "10.20.0.0/16" } },
      { ...lb, allowedSources: ["10.99.0.0/16"], internal: false },
    );
    assert.deepEqual(r, {
      ok: true,
      exposure: { sourceRanges: ["10.99.0.0/16"], internal: false, public: false },
    });
  });

  it("refuses an internet-facing proxy with nobody named, a world range by accident, or public plus sources", () => {
    const none = proxyExposure({ infrastructure: "existing" }, lb);
    assert.equal(none.ok, false);
    assert.match(
      !none.ok ? none.problem : "",
      /set networkConnector\.allowedSources .* or publicEndpoint: true/,
    );
    const world = proxyExposure({ infrastructure: "existing" }, { ...lb, allowedSources: ["0.0.0.0/0"] });
    assert.match(
      !world.ok ? world.problem : "",
      /allowedSources 0\.0\.0\.0\/0 admits every address; set publicEndpoint: true/,
    );
    const both = proxyExposure(
      { infrastructure: "existing" },
      { ...lb, publicEndpoint: true, allowedSources: ["10.0.0.0/8"] },
    );
    assert.match(!both.ok ? both.problem : "", /remove one of the two/);
  });

  it("publicEndpoint opens it on purpose; ClusterIP needs no sources", () => {
    assert.deepEqual(proxyExposure({ infrastructure: "existing" }, { ...lb, publicEndpoint: true }), {
      ok: true,
      exposure: { sourceRanges: ["0.0.0.0/0"], internal: false, public: true },
    });
    assert.deepEqual(proxyExposure({ infrastructure: "existing" }, { ...lb, serviceType: "ClusterIP" }), {
      ok: true,
      exposure: { sourceRanges: [], internal: true, public: false },
    });
  });

  it("knows private ranges: RFC 1918, shared address space, loopback", () => {
    for (const c of ["10.1.0.0/16", "172.20.0.0/16", "192.168.5.0/24", "100.64.1.0/24", "127.0.0.0/8"])
      assert.equal(isPrivateCidr(c), true, c);
    for (const c of ["203.0.113.0/24", "172.32.0.0/16", "0.0.0.0/0", "8.8.8.8/32"])
      assert.equal(isPrivateCidr(c), false, c);
  });

  it("renders the Service's fields and the pods' ingress rule", () => {
    const internal = { sourceRanges: ["10.20.0.0/16"], internal: true, public: false };
    const svc = serviceExposure(internal, "LoadBalancer");
    assert.deepEqual(svc.loadBalancerSourceRanges, ["10.20.0.0/16"]);
    assert.equal(svc.annotations["service.beta.kubernetes.io/aws-load-balancer-scheme"], "internal");
    assert.deepEqual(serviceExposure(internal, "NodePort"), {
      annotations: {},
      externalTrafficPolicy: "Local",
    });
    assert.deepEqual(serviceExposure(internal, "ClusterIP"), { annotations: {} });
    assert.deepEqual(ingressRule(internal, "NodePort", [30000, 30001]), {
      from: [{ ipBlock: { cidr: "10.20.0.0/16" } }],
      ports: [
        { protocol: "TCP", port: 30000 },
        { protocol: "TCP", port: 30001 },
      ],
    });
  });
});
