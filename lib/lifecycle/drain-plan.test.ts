import { strict as assert } from "node:assert";
import { connectorXrd } from "../connector-api/xrd";
import { postgresqlInstanceXrd, serviceBindingXrd } from "../dataservices/xrds";
import { composedRefs, describeSnapshot, drainKinds, drainTimeoutMessage } from "./drain-plan";

describe("teardown drain plan", () => {
  it("reads the kinds from the XRDs; claims that act on an instance (spec.instanceRef) come first", () => {
    const kinds = drainKinds([postgresqlInstanceXrd(), connectorXrd("klutch-proxy"), serviceBindingXrd()]);
    assert.deepEqual(
      kinds.map((k) => [k.stage, k.group, k.version, k.compositePlural, k.claimKind]),
      [
        [0, "anynines.com", "v1", "xservicebindings", "ServiceBinding"],
        [1, "anynines.com", "v1", "xpostgresqlinstances", "PostgresqlInstance"],
        [1, "klutch.anynines.com", "v1", "xtcpconnections", "TCPConnection"],
      ],
    );
  });

  it("skips what is not an XRD it can list, and keeps composites offered without a claim", () => {
    const noClaim = {
      spec: {
        group: "g.example",
        names: { plural: "xthings", kind: "XThing" },
        versions: [{ name: "v1", served: true }],
      },
    };
    const unserved = {
      spec: { group: "g", names: { plural: "p", kind: "K" }, versions: [{ name: "v1", served: false }] },
    };
    const kinds = drainKinds([{}, noClaim, unserved]);
    assert.deepEqual(kinds, [
      { group: "g.example", version: "v1", compositePlural: "xthings", compositeKind: "XThing", stage: 1 },
    ]);
  });

  it("takes the composed objects from spec.resourceRefs, dropping incomplete ones", () => {
    const xr = {
      spec: {
        resourceRefs: [
          { apiVersion: "klutch.anynines.com/v1alpha1", kind: "NetworkPath", name: "np-1" },
          { apiVersion: "v1", kind: "Secret" },
        ],
      },
    };
    assert.deepEqual(composedRefs(xr), [
      { apiVersion: "klutch.anynines.com/v1alpha1", kind: "NetworkPath", name: "np-1" },
    ]);
    assert.deepEqual(composedRefs({}), []);
  });

  it("says what is left in one line, shortened, and what to do when time runs out", () => {
    const claims = Array.from({ length: 7 }, (_, i) => ({
      apiVersion: "klutch.anynines.com/v1",
      kind: "TCPConnection",
      namespace: "cluster-app-1",
      name: `c${i}`,
    }));
    const composed = [{ apiVersion: "klutch.anynines.com/v1alpha1", kind: "NetworkPath", name: "np-1" }];
    assert.equal(
      describeSnapshot({ claims, composites: [], composed }, 2),
      "7 claims (TCPConnection cluster-app-1/c0, TCPConnection cluster-app-1/c1, and 5 more), 1 composed object (NetworkPath np-1)",
    );
    assert.equal(describeSnapshot({ claims: [], composites: [], composed: [] }), "nothing left");
    assert.match(
      drainTimeoutMessage({ claims: [], composites: [], composed }, 900),
      /after 900s.*NetworkPath np-1.*run the destroy again/,
    );
  });
});
