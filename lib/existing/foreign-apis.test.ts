import { strict as assert } from "node:assert";
import { environmentSchema } from "../../components/config/schema";
import { apiDefinitionsOnExistingControlPlane, foreignApiIssues } from "./foreign-apis";

const config = (infrastructure: "existing" | "local") =>
  environmentSchema.parse({
    environment: "ops",
    controlPlane: {
      name: "ops-cp",
      infrastructure,
      ...(infrastructure === "existing" ? { kubeconfig: { path: "cp.yaml" } } : {}),
    },
    appClusters: [],
  });

describe("the APIs an environment defines on a control plane it did not make", () => {
  it("klutch-bind's six CRDs, the NetworkPath CRD and the connector's XRD; none on a control plane it makes", () => {
    assert.deepEqual(apiDefinitionsOnExistingControlPlane(config("existing")), [
      { kind: "CustomResourceDefinition", name: "apiserviceexportrequests.klutch.anynines.com" },
      { kind: "CustomResourceDefinition", name: "apiserviceexports.klutch.anynines.com" },
      { kind: "CustomResourceDefinition", name: "apiservicebindings.klutch.anynines.com" },
      { kind: "CustomResourceDefinition", name: "apiservicenamespaces.klutch.anynines.com" },
      { kind: "CustomResourceDefinition", name: "clusterbindings.klutch.anynines.com" },
      {
        kind: "CustomResourceDefinition",
        name: "apiserviceexporttemplates.example-backend.klutch.anynines.com",
      },
      { kind: "CustomResourceDefinition", name: "networkpaths.klutch.anynines.com" },
      { kind: "CompositeResourceDefinition", name: "xtcpconnections.klutch.anynines.com" },
    ]);
    assert.deepEqual(apiDefinitionsOnExistingControlPlane(config("local")), []);
  });

  it("refuses one without the environment's label or of another environment, naming it; passes its own", () => {
    const crd = "CustomResourceDefinition" as const;
    const issues = foreignApiIssues(
      [
        { kind: crd, name: "apiserviceexports.klutch.anynines.com" },
        {
          kind: crd,
          name: "networkpaths.klutch.anynines.com",
          labels: { "klutch.anynines.com/environment": "staging" },
        },
        {
          kind: crd,
          name: "clusterbindings.klutch.anynines.com",
          labels: { "klutch.anynines.com/environment": "ops" },
        },
      ],
      { environment: "ops", controlPlane: "ops-cp" },
    );
    assert.deepEqual(
      issues.map((i) => i.path),
      ["klutch:controlPlane.kubeconfig", "klutch:controlPlane.kubeconfig"],
    );
    assert.match(
      issues[0]!.message,
      /^the control plane ops-cp already has CustomResourceDefinition apiserviceexports\.klutch\.anynines\.com, which environment ops did not make \(it has no label klutch\.anynines\.com\/environment=ops\)/,
    );
    assert.match(issues[1]!.message, /\(it belongs to environment staging\)/);
  });
});
