import { strict as assert } from "node:assert";
import { foreignCrossplaneIssues, type DeploymentLike } from "./foreign-crossplane";

const deployment = (
  namespace: string,
  image: string,
  labels: Record<string, string> = {},
): DeploymentLike => ({
  metadata: { name: "crossplane", namespace, labels: { app: "crossplane", ...labels } },
  spec: { template: { spec: { containers: [{ name: "crossplane", image }] } } },
});
const input = { environment: "ops", controlPlane: "ops-cp", version: "2.4.0" };

describe("a Crossplane the environment did not install (pure)", () => {
  it("none found, or only its own: nothing to refuse", () => {
    assert.deepEqual(foreignCrossplaneIssues([], input), []);
    const ours = deployment("crossplane-system", "xpkg.crossplane.io/crossplane/crossplane:v2.3.0", {
      "klutch.anynines.com/environment": "ops",
    });
    assert.deepEqual(foreignCrossplaneIssues([ours], input), [], "the upgrade guard judges its own");
  });

  it("another's is refused on the kubeconfig's field, naming version, Deployment, owner and the fix", () => {
    const [issue, ...rest] = foreignCrossplaneIssues(
      [deployment("upbound-system", "xpkg.upbound.io/upbound/crossplane:v1.20.3-up.1")],
      input,
    );
    assert.deepEqual(rest, []);
    assert.equal(issue!.path, "klutch:controlPlane.kubeconfig");
    assert.equal(
      issue!.message,
      "the control plane ops-cp already runs Crossplane 1.20.3 as Deployment upbound-system/crossplane, which environment ops did not install " +
        "(it has no label klutch.anynines.com/environment=ops); this environment installs Crossplane 2.4.0 itself and does not take over one it did not make: " +
        "remove that Crossplane (`helm uninstall <release> -n upbound-system` where Helm installed it), hand over a control plane without one, " +
        "or run Klutch on it with crossplane.useInstalled set to true (docs/existing-clusters.md)",
    );
  });

  it("another environment's, and one of an image without a version, are refused too", () => {
    const other = deployment("crossplane-system", "klutch.local/crossplane:2.4.0-0a1b2c3d4e5f", {
      "klutch.anynines.com/environment": "staging",
    });
    const unknown = deployment("cp", "registry.example.com/crossplane:latest");
    const messages = foreignCrossplaneIssues([other, unknown], input).map((i) => i.message);
    assert.match(
      messages[0]!,
      /runs Crossplane 2\.4\.0 as Deployment crossplane-system\/crossplane.*\(it belongs to environment staging\)/,
    );
    assert.match(
      messages[1]!,
      /runs a Crossplane of unknown version \(image registry\.example\.com\/crossplane:latest\)/,
    );
  });
});
