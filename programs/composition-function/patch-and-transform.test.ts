import { strict as assert } from "node:assert";
import type { PatchTemplate, ResourceTemplate } from "./input.js";
import { conditionStatus, isReady, patchAndTransform } from "./patch-and-transform.js";

const from = (fromFieldPath: string, toFieldPath: string, required = false): PatchTemplate => ({
  type: "FromCompositeFieldPath",
  fromFieldPath,
  toFieldPath,
  fromFieldPathPolicy: required ? "Required" : "Optional",
});
const to = (field: string, required = false): PatchTemplate => ({
  type: "ToCompositeFieldPath",
  fromFieldPath: field,
  toFieldPath: field,
  fromFieldPathPolicy: required ? "Required" : "Optional",
});

/** The shape of this project's NetworkPath template (lib/connector-api/compositions.ts). */
function networkPath(name = "network-path"): ResourceTemplate {
  return {
    name,
    base: {
      apiVersion: "klutch.anynines.com/v1alpha1",
      kind: "NetworkPath",
      spec: { implementation: "proxy" },
    },
    patches: [
      from("metadata.labels[crossplane.io/claim-namespace]", "spec.consumerNamespace"),
      from("metadata.name", "spec.connection", true),
      from("spec.instanceHost", "spec.instanceHost", true),
      from("spec.port", "spec.port", true),
      from("spec.enhancements", "spec.enhancements"),
      to("status.hostForConsumer"),
      to("status.port"),
    ],
    readinessChecks: [{ type: "MatchCondition", matchCondition: { type: "Ready", status: "True" } }],
  };
}

const xr = (spec: Record<string, unknown>, labels: Record<string, string> = {}) => ({
  apiVersion: "klutch.anynines.com/v1",
  kind: "XTCPConnection",
  metadata: { name: "conn-1", labels },
  spec,
});

const observedPath = (status: Record<string, unknown>) => ({
  resource: {
    apiVersion: "klutch.anynines.com/v1alpha1",
    kind: "NetworkPath",
    metadata: { name: "conn-1-x7k2p", labels: { "crossplane.io/composite": "conn-1" } },
    spec: { implementation: "proxy", connection: "conn-1" },
    status,
  },
});

const READY = { type: "Ready", status: "True", reason: "Available" };

describe("composition function: patch and transform", () => {
  it("composes a resource not observed yet from its base and the composite, not ready", () => {
    const out = patchAndTransform(
      xr(
        { instanceHost: "pg.internal", port: 5432, enhancements: [{ a: 1 }] },
        { "crossplane.io/claim-namespace": "team-a" },
      ),
      {},
      [networkPath()],
    );
    assert.deepEqual(out, {
      composed: [
        {
          name: "network-path",
          resource: {
            apiVersion: "klutch.anynines.com/v1alpha1",
            kind: "NetworkPath",
            spec: {
              implementation: "proxy",
              consumerNamespace: "team-a",
              connection: "conn-1",
              instanceHost: "pg.internal",
              port: 5432,
              enhancements: [{ a: 1 }],
            },
          },
          ready: false,
        },
      ],
      compositeStatusPatch: {},
      results: [],
    });
  });

  it("skips Optional patches whose source is missing without a word", () => {
    const out = patchAndTransform(xr({ instanceHost: "10.0.0.7", port: 1 }), {}, [networkPath()]);
    assert.deepEqual(out.results, []);
    assert.deepEqual(out.composed[0]!.resource.spec, {
      implementation: "proxy",
      connection: "conn-1",
      instanceHost: "10.0.0.7",
      port: 1,
    });
  });

  it("holds back a new resource whose Required source is missing, warns, and keeps the composite not ready", () => {
    const other: ResourceTemplate = {
      name: "other",
      base: { apiVersion: "v1", kind: "ConfigMap" },
      patches: [from("metadata.name", "data.owner")],
      readinessChecks: [],
    };
    const out = patchAndTransform(xr({ port: 5432 }), {}, [networkPath(), other]);
    assert.deepEqual(
      out.composed.map((c) => c.name),
      ["other"],
    );
    assert.equal(out.compositeReady, false);
    assert.equal(out.results.length, 1);
    assert.equal(out.results[0]!.severity, "Warning");
    assert.match(out.results[0]!.message, /not adding new composed resource "network-path"/);
    assert.match(out.results[0]!.message, /patch at index 2 has 'policy.fromFieldPath: Required'/);
    assert.match(out.results[0]!.message, /the composite resource has no field "spec.instanceHost"/);
  });

  it("keeps composing an existing resource whose Required source went missing, skipping only that patch", () => {
    const out = patchAndTransform(xr({ port: 5432 }), { "network-path": observedPath({}) }, [networkPath()]);
    assert.deepEqual(
      out.composed.map((c) => c.name),
      ["network-path"],
    );
    assert.equal(out.compositeReady, undefined);
    assert.equal(out.results.length, 1);
    assert.equal(out.results[0]!.severity, "Warning");
    assert.match(out.results[0]!.message, /ignoring 'policy.fromFieldPath: Required'/);
    assert.match(out.results[0]!.message, /"spec.instanceHost"/);
    assert.deepEqual(out.composed[0]!.resource.spec, {
      implementation: "proxy",
      connection: "conn-1",
      port: 5432,
    });
  });

  it("keeps an existing resource's name and namespace, and nothing else it observed", () => {
    const observed = observedPath({ conditions: [READY] });
    (observed.resource.metadata as Record<string, unknown>).namespace = "ns";
    const out = patchAndTransform(xr({ instanceHost: "h", port: 2 }), { "network-path": observed }, [
      networkPath(),
    ]);
    const resource = out.composed[0]!.resource;
    assert.deepEqual(resource.metadata, { name: "conn-1-x7k2p", namespace: "ns" });
    assert.equal(resource.status, undefined);
  });

  it("copies the observed resource's status back to the composite and reports it ready", () => {
    const out = patchAndTransform(
      xr({ instanceHost: "h", port: 2 }),
      {
        "network-path": observedPath({
          hostForConsumer: "consumer.internal",
          port: 40001,
          conditions: [READY],
        }),
      },
      [networkPath()],
    );
    assert.deepEqual(out.compositeStatusPatch, {
      status: { hostForConsumer: "consumer.internal", port: 40001 },
    });
    assert.equal(out.composed[0]!.ready, true);
    assert.deepEqual(out.results, []);
  });

  it("writes nothing to the composite while the observed resource has no status yet", () => {
    const out = patchAndTransform(xr({ instanceHost: "h", port: 2 }), { "network-path": observedPath({}) }, [
      networkPath(),
    ]);
    assert.deepEqual(out.compositeStatusPatch, {});
    assert.equal(out.composed[0]!.ready, false);
  });

  it("fails the whole composition on a patch through a value of the wrong type", () => {
    const out = patchAndTransform(xr({ instanceHost: "h", port: 2, enhancements: "x" }), {}, [
      { ...networkPath(), patches: [from("spec.enhancements.first", "spec.first")] },
    ]);
    assert.deepEqual(out.composed, []);
    assert.equal(out.results.length, 1);
    assert.equal(out.results[0]!.severity, "Fatal");
    assert.match(
      out.results[0]!.message,
      /cannot render composed resource "network-path" "FromCompositeFieldPath" patch at index 0: spec.enhancements: not an object/,
    );
  });

  it("never writes through to the template's base or the observed objects", () => {
    const template = networkPath();
    const composite = xr({ instanceHost: "h", port: 2, enhancements: [{ a: 1 }] });
    const first = patchAndTransform(composite, {}, [template]);
    (first.composed[0]!.resource.spec as Record<string, unknown[]>).enhancements!.push("changed");
    assert.deepEqual(template.base.spec, { implementation: "proxy" });
    assert.deepEqual(composite.spec.enhancements, [{ a: 1 }]);
    const second = patchAndTransform(composite, {}, [template]);
    assert.deepEqual((second.composed[0]!.resource.spec as Record<string, unknown>).enhancements, [{ a: 1 }]);
  });

  describe("readiness", () => {
    const observed = (...conditions: Record<string, unknown>[]) => observedPath({ conditions }).resource;

    it("without checks: ready when the Ready condition is True", () => {
      assert.equal(isReady(observed(READY), []), true);
      assert.equal(isReady(observed({ type: "Ready", status: "False" }), []), false);
      assert.equal(isReady(observed(), []), false);
      assert.equal(isReady(observedPath({}).resource, []), false);
    });

    it("MatchCondition: ready when that condition has that status; a missing condition reads Unknown", () => {
      const check = (type: string, status: string) => [
        { type: "MatchCondition" as const, matchCondition: { type, status } },
      ];
      assert.equal(isReady(observed({ type: "Synced", status: "True" }), check("Synced", "True")), true);
      assert.equal(isReady(observed(READY), check("Synced", "True")), false);
      assert.equal(isReady(observed(), check("Synced", "Unknown")), true);
      assert.equal(conditionStatus(observed(READY), "Ready"), "True");
    });

    it("None: always ready once observed; every check must pass", () => {
      assert.equal(isReady(observed(), [{ type: "None" }]), true);
      assert.equal(
        isReady(observed(), [
          { type: "None" },
          { type: "MatchCondition", matchCondition: { type: "Ready", status: "True" } },
        ]),
        false,
      );
    });

    it("a resource not observed yet is not ready, whatever its checks", () => {
      const out = patchAndTransform(xr({ instanceHost: "h", port: 2 }), {}, [
        { ...networkPath(), readinessChecks: [{ type: "None" }] },
      ]);
      assert.equal(out.composed[0]!.ready, false);
    });

    it("an observed resource with check None is ready", () => {
      const out = patchAndTransform(
        xr({ instanceHost: "h", port: 2 }),
        { "network-path": observedPath({}) },
        [{ ...networkPath(), readinessChecks: [{ type: "None" }] }],
      );
      assert.equal(out.composed[0]!.ready, true);
    });
  });
});
