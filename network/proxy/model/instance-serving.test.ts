import { strict as assert } from "node:assert";
import { networkPath } from "../../../test/helpers/network-path";
import type { EndpointSliceLike } from "./kernel-path";
import { instanceServices, unservedProblem, withUnserved } from "./instance-serving";

const ref = { namespace: "team-a", name: "pg" };
const service = { spec: { type: "ClusterIP", ports: [{ name: "postgresql", port: 5432 }] } };
const slice = (...conditions: EndpointSliceLike["endpoints"] & object): EndpointSliceLike => ({
  ports: [{ name: "postgresql", protocol: "TCP" }],
  endpoints: conditions,
});

describe("proxy: whether an instance Service's port reaches a pod that takes new connections", () => {
  it("a Ready endpoint serves; so does one whose Ready is unset (the EndpointSlice API's default)", () => {
    assert.equal(unservedProblem(ref, 5432, service, [slice({ conditions: { ready: true } })]), undefined);
    assert.equal(unservedProblem(ref, 5432, service, [slice({})]), undefined);
  });

  it("with no Ready endpoint, a Serving and Terminating one (kube-proxy's fallback) is a pod being deleted: not usable, said so", () => {
    const draining = { conditions: { ready: false, serving: true, terminating: true } };
    assert.match(
      unservedProblem(ref, 5432, service, [slice(draining)]) ?? "",
      /^Service team-a\/pg has no ready endpoint for port 5432, only terminating ones: the instance's pods are being deleted/,
    );
    // Beside a Ready one (a rolling update's new pod), the path is usable.
    assert.equal(
      unservedProblem(ref, 5432, service, [slice(draining, { conditions: { ready: true } })]),
      undefined,
    );
  });

  it("a deleted pod (not Ready, not Serving, Terminating) or no endpoint at all: refused, naming the Service and port", () => {
    const gone = { conditions: { ready: false, serving: false, terminating: true } };
    for (const slices of [[slice(gone)], [slice()], []]) {
      const problem = unservedProblem(ref, 5432, service, slices);
      assert.match(
        problem ?? "",
        /^Service team-a\/pg has no ready endpoint for port 5432, so connections to it are refused/,
      );
    }
    // Not Ready and not Terminating (failing its readiness probe): refused too.
    assert.ok(unservedProblem(ref, 5432, service, [slice({ conditions: { ready: false, serving: false } })]));
  });

  it("only endpoints of the slices that carry the Service port's name count (as kube-proxy matches them)", () => {
    const other: EndpointSliceLike = {
      ports: [{ name: "metrics" }],
      endpoints: [{ conditions: { ready: true } }],
    };
    assert.ok(unservedProblem(ref, 5432, service, [other]));
  });

  it("says nothing where kube-proxy has no rules (ExternalName, headless) or the Service has no such port", () => {
    assert.equal(unservedProblem(ref, 5432, { spec: { type: "ExternalName" } }, []), undefined);
    assert.equal(unservedProblem(ref, 5432, { spec: { ...service.spec, clusterIP: "None" } }, []), undefined);
    assert.equal(unservedProblem(ref, 6379, service, []), undefined);
  });

  it("groups a group's paths by the Service their host names; addresses and other domains are not read", () => {
    const paths = [
      networkPath("a", { spec: { instanceHost: "pg.team-a.svc.cluster.local", port: 5432 } }),
      networkPath("b", { spec: { instanceHost: "PG.team-a.svc", port: 5433 } }),
      networkPath("c", { spec: { instanceHost: "10.0.0.7", port: 5432 } }),
      networkPath("d", { spec: { instanceHost: "pg.a9s.example.com", port: 5432 } }),
    ];
    assert.deepEqual(
      [...instanceServices(paths).entries()],
      [
        [
          "team-a/pg",
          {
            ref,
            paths: [
              { id: "a", port: 5432 },
              { id: "b", port: 5433 },
            ],
          },
        ],
      ],
    );
  });

  it("an unserved path is not Ready whatever HAProxy's last check said, with the endpoints' message; a missing proxy pod stands", () => {
    const unserved = "Service team-a/pg has no ready endpoint";
    const merged = withUnserved(
      {
        a: { ready: true, reason: "ConnectivityEstablished", message: "HAProxy reaches pg" },
        b: { ready: false, reason: "ProxyUnavailable", message: "no proxy pod" },
        // HAProxy's checks failing too: the same path says the same, whichever a poll saw first.
        d: { ready: false, reason: "InstanceUnreachable", message: "HAProxy's health checks of pg fail" },
        e: { ready: true, reason: "ConnectivityEstablished", message: "HAProxy reaches redis" },
      },
      { a: unserved, b: unserved, c: "x", d: unserved },
    );
    assert.deepEqual(merged, {
      a: { ready: false, reason: "InstanceUnreachable", message: unserved },
      b: { ready: false, reason: "ProxyUnavailable", message: "no proxy pod" },
      c: { ready: false, reason: "InstanceUnreachable", message: "x" },
      d: { ready: false, reason: "InstanceUnreachable", message: unserved },
      e: { ready: true, reason: "ConnectivityEstablished", message: "HAProxy reaches redis" },
    });
  });
});
