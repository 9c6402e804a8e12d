import { strict as assert } from "node:assert";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { parseAllDocuments } from "yaml";
import { apiObjects } from "./api-objects";
import type { ApiPackaging } from "../../lib/crossplane/configuration-package";
import type { PackageDelivery } from "./configuration-package";
import { mockPulumi, settle, SECRET_MARKER, SECRET_SIG } from "../../test/helpers/mocks";

const XRD = {
  apiVersion: "apiextensions.crossplane.io/v1",
  kind: "CompositeResourceDefinition",
  metadata: { name: "xthings.example.org" },
  spec: { group: "example.org" },
};
const COMPOSITION = {
  apiVersion: "apiextensions.crossplane.io/v1",
  kind: "Composition",
  metadata: { name: "thing" },
  spec: { mode: "Pipeline" },
};
const packaging = (looseDeclarations: ApiPackaging["looseDeclarations"]): PackageDelivery => ({
  kubeconfig: "apiVersion: v1\nkind: Config\n",
  registry: {
    address: "10.0.0.1:5000",
    pushAddress: "127.0.0.1:5000",
    caBundle: "-----BEGIN CERTIFICATE-----\n",
  },
  dependsOn: [{ function: "10.0.0.1:5000/klutch/function-klutch", version: ">=v0.0.0-0" }],
  looseDeclarations,
});

/** Runs apiObjects under a parent whose transformation records each child's retainOnDelete. */
async function build(p?: PackageDelivery) {
  const run = mockPulumi({});
  const retained = new Map<string, boolean>();
  const parent = new pulumi.ComponentResource(
    "test:index:Parent",
    "p",
    {},
    {
      transformations: [
        (a) => {
          retained.set(a.name, a.opts.retainOnDelete === true);
          return undefined;
        },
      ],
    },
  );
  apiObjects(parent, "api-package", {
    provider: new k8s.Provider("cp", {}),
    xrds: [{ resourceName: "api-xrd", object: XRD }],
    compositions: [{ resourceName: "api-thing", object: COMPOSITION }],
    ...(p ? { packaging: p } : {}),
    package: { name: "klutch-things", description: "things" },
    labels: {},
  });
  await settle();
  const names = (type: string) => run.ofType(type).map((r) => r.name);
  return { run, retained, names };
}

describe("apiObjects (mocks): loose objects, or a package that adopts them, or the package alone", () => {
  it("without packaging: the XRD (background deletion) and compositions as loose objects, deleted with the stack", async () => {
    const { run, retained, names } = await build();
    assert.deepEqual(names("kubernetes:apiextensions.crossplane.io/v1:CompositeResourceDefinition"), [
      "api-xrd",
    ]);
    assert.deepEqual(names("kubernetes:apiextensions.crossplane.io/v1:Composition"), ["api-thing"]);
    assert.equal(run.ofType("kubernetes:pkg.crossplane.io/v1:Configuration").length, 0);
    assert.equal(retained.get("api-xrd"), false);
    assert.equal(
      run.ofType("kubernetes:apiextensions.crossplane.io/v1:CompositeResourceDefinition")[0]!.inputs.metadata
        .annotations["pulumi.com/deletionPropagationPolicy"],
      "background",
    );
  });

  it("retained: the same loose objects, retained on delete, and a Configuration whose package holds exactly them", async () => {
    const { run, retained, names } = await build(packaging("retained"));
    assert.deepEqual(names("kubernetes:apiextensions.crossplane.io/v1:CompositeResourceDefinition"), [
      "api-xrd",
    ]);
    assert.equal(retained.get("api-xrd"), true);
    assert.equal(retained.get("api-thing"), true);
    const [push] = run.ofType("pulumi-nodejs:dynamic/klutch:PackagePush");
    assert.equal(push!.inputs.registry, "10.0.0.1:5000");
    assert.equal(push!.inputs.pushRegistry, "127.0.0.1:5000");
    assert.equal(push!.inputs.repository, "klutch/klutch-things");
    const docs = parseAllDocuments(push!.inputs.packageYaml as string).map(
      (d) => d.toJS() as Record<string, any>,
    );
    const looseXrd = run.ofType("kubernetes:apiextensions.crossplane.io/v1:CompositeResourceDefinition")[0]!
      .inputs;
    assert.deepEqual(docs[1], { ...XRD, metadata: looseXrd.metadata }, "the package's XRD is the loose one");
    assert.deepEqual(docs[2], COMPOSITION);
    const [config] = run.ofType("kubernetes:pkg.crossplane.io/v1:Configuration");
    assert.equal(config!.inputs.metadata.name, "klutch-things");
    assert.equal(config!.inputs.metadata.annotations["pulumi.com/waitFor"], "condition=Healthy");
    // Its delete pauses the package manager on the Configuration (package-pause.ts).
    const [pause] = run.ofType("pulumi-nodejs:dynamic/klutch:PackagePause");
    assert.equal(pause!.inputs.configuration, "klutch-things");
    assert.equal(pause!.inputs.kubeconfig[SECRET_SIG], SECRET_MARKER, "the kubeconfig is a secret");
  });

  it("none: only the package; nothing loose is declared", async () => {
    const { run, names } = await build(packaging("none"));
    assert.deepEqual(names("kubernetes:apiextensions.crossplane.io/v1:CompositeResourceDefinition"), []);
    assert.deepEqual(names("kubernetes:apiextensions.crossplane.io/v1:Composition"), []);
    assert.equal(run.ofType("kubernetes:pkg.crossplane.io/v1:Configuration").length, 1);
  });
});
