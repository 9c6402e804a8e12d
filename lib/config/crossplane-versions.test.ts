import { strict as assert } from "node:assert";
import {
  crossplaneUpgradeProblem,
  crossplaneVersionProblem,
  CROSSPLANE_VERSION_PATTERN,
  defaultCrossplaneVersion,
} from "./crossplane-versions";

describe("Crossplane versions (pure)", () => {
  it("v2 by default, 1.20 for a core run as a process, which refuses v2", () => {
    assert.equal(defaultCrossplaneVersion(false), "2.4.0");
    assert.equal(defaultCrossplaneVersion(true), "1.20.11");
    assert.equal(crossplaneVersionProblem("2.4.0", false), undefined);
    assert.equal(crossplaneVersionProblem("1.20.11", true), undefined);
    assert.match(
      crossplaneVersionProblem("2.0.2", true) ?? "",
      /^is 2\.0\.2, but Crossplane core run as a process/,
    );
  });

  it("accepts 1.17 to 1.20 and 2.0 to 2.4, nothing else", () => {
    for (const v of ["1.17.0", "1.20.11", "2.0.2", "2.4.0"]) assert.match(v, CROSSPLANE_VERSION_PATTERN);
    for (const v of ["1.16.3", "2.5.0", "3.0.0", "v2.4.0", "2.4"])
      assert.doesNotMatch(v, CROSSPLANE_VERSION_PATTERN);
  });

  it("an upgrade goes one minor at a time, 1.20 to 2.0 among them, and never back", () => {
    assert.equal(crossplaneUpgradeProblem("1.20.11", "2.0.2"), undefined);
    assert.equal(crossplaneUpgradeProblem("2.3.1", "2.4.0"), undefined);
    assert.equal(crossplaneUpgradeProblem("v2.4.0", "2.4.1"), undefined);
    assert.equal(
      crossplaneUpgradeProblem("1.20.11", "2.4.0"),
      "is 2.4.0, but the control plane runs Crossplane 1.20.11 and Crossplane upgrades one minor at a time: run up with crossplane.version set to each of 2.0.x, 2.1.x, 2.2.x, 2.3.x, 2.4.x in turn (the last being 2.4.0)",
    );
    assert.match(
      crossplaneUpgradeProblem("2.4.0", "1.20.11") ?? "",
      /has no downgrade: set crossplane\.version to 2\.4\.0/,
    );
    // A core this table does not know (a newer one an operator installed) is left to Crossplane.
    assert.equal(crossplaneUpgradeProblem("2.6.0", "2.4.0"), undefined);
  });
});
