import { strict as assert } from "node:assert";
import { admissionExpression, bindingAdmissionManifests, offeredNetworkBindings } from "./binding-admission";

describe("dataservices: ServiceBinding admission (pure)", () => {
  it("judges only the network-aware bindings: upstream's and the local backend's own names are not in its offer", () => {
    assert.deepEqual(
      offeredNetworkBindings([
        "a8s-postgresql",
        "a8s-servicebinding",
        "a8s-servicebinding-network-proxy",
        "a8s-servicebinding-network",
        "a9s-servicebinding-network-noop",
        "a8s-servicebinding-network",
      ]),
      ["a8s-servicebinding-network", "a8s-servicebinding-network-proxy", "a9s-servicebinding-network-noop"],
    );
  });

  it("its expression lists the offer in a stable order and admits names outside the domain and unchanged names", () => {
    const e = admissionExpression(["b-x", "a-x"]);
    assert.match(e, /in \['a-x', 'b-x'\]/);
    assert.match(
      e,
      /startsWith\('a8s-servicebinding-network'\) \|\| object\.spec\.compositionRef\.name\.startsWith\('a9s-servicebinding-network'\)/,
    );
    assert.match(e, /oldObject\.spec\.compositionRef\.name == object\.spec\.compositionRef\.name/);
  });

  it("a policy for servicebindings of anynines.com, enforced by a Deny binding", () => {
    const { policy, binding } = bindingAdmissionManifests(["a8s-servicebinding-network"], { team: "x" });
    const spec = policy.spec as {
      matchConstraints: {
        resourceRules: { apiGroups: string[]; resources: string[]; operations: string[] }[];
      };
    };
    assert.deepEqual(spec.matchConstraints.resourceRules[0]?.apiGroups, ["anynines.com"]);
    assert.deepEqual(spec.matchConstraints.resourceRules[0]?.resources, ["servicebindings"]);
    assert.deepEqual(spec.matchConstraints.resourceRules[0]?.operations, ["CREATE", "UPDATE"]);
    assert.deepEqual((binding.spec as { validationActions: string[] }).validationActions, ["Deny"]);
    assert.deepEqual((policy.metadata as { labels: Record<string, string> }).labels, { team: "x" });
  });
});
