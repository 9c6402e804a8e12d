import { strict as assert } from "node:assert";
import {
  CompositeError,
  claimOf,
  conditionOf,
  describe as describeComposite,
  isReadyTrue,
  stringAt,
  uidOf,
} from "./step.js";

const xr = (metadata: Record<string, unknown>) => ({
  apiVersion: "anynines.com/v1",
  kind: "XServiceBinding",
  metadata,
});

describe("composition function: step helpers", () => {
  it("claimOf reads the claim's name and namespace from Crossplane's labels", () => {
    const labels = { "crossplane.io/claim-name": "app-db", "crossplane.io/claim-namespace": "team-a" };
    assert.deepEqual(claimOf(xr({ name: "x", labels }), "Step"), { name: "app-db", namespace: "team-a" });
  });

  it("claimOf is a CompositeError naming the composite, the missing label and the fix", () => {
    for (const metadata of [{ name: "x" }, { name: "x", labels: { "crossplane.io/claim-name": "" } }])
      assert.throws(
        () => claimOf(xr(metadata), "Step"),
        (e: unknown) =>
          e instanceof CompositeError &&
          e.message.startsWith(
            'XServiceBinding "x" has no label crossplane.io/claim-name; Step composes only composite resources made from a claim',
          ),
      );
    assert.throws(() => claimOf({}, "Step"), /: composite resource has no label crossplane\.io\/claim-name/);
  });

  it("uidOf needs a uid", () => {
    assert.equal(uidOf(xr({ uid: "u-1" }), "Step"), "u-1");
    assert.throws(() => uidOf(xr({ name: "x" }), "Step"), /XServiceBinding "x" has no metadata\.uid/);
  });

  it("reads conditions and strings of plain objects", () => {
    const o = { status: { conditions: [{ type: "Ready", status: "True" }, "junk"], host: "h", empty: "" } };
    assert.equal(isReadyTrue(o), true);
    assert.equal(isReadyTrue({ status: { conditions: [{ type: "Ready", status: "False" }] } }), false);
    assert.equal(isReadyTrue(undefined), false);
    assert.equal(conditionOf(o, "Synced"), undefined);
    assert.equal(stringAt(o, "status", "host"), "h");
    assert.equal(stringAt(o, "status", "empty"), undefined);
    assert.equal(stringAt(o, "status", "conditions", "x"), undefined);
    assert.equal(stringAt(o, "toString"), undefined);
    assert.equal(describeComposite({ kind: "K" }), "K");
  });
});
