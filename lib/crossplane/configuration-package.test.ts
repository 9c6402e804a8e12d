import * as assert from "node:assert/strict";
import { parseAllDocuments } from "yaml";
import {
  configurationPackageYaml,
  packageImageDocuments,
  packageSource,
  packageTag,
  type ConfigurationPackageSpec,
} from "./configuration-package";

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
const spec = (objects: Record<string, unknown>[]): ConfigurationPackageSpec => ({
  name: "klutch-things",
  description: "things",
  crossplaneVersion: ">=v1.17.0-0",
  dependsOn: [{ function: "10.0.0.1:5000/klutch/function-klutch", version: ">=v0.0.0-0" }],
  objects,
});

describe("Configuration packages (pure)", () => {
  it("writes the meta object first, then each object, as one YAML stream Crossplane's parser splits", () => {
    const docs = parseAllDocuments(configurationPackageYaml(spec([XRD, COMPOSITION]))).map(
      (d) => d.toJS() as Record<string, unknown>,
    );
    assert.equal(docs.length, 3);
    assert.deepEqual(docs[0], {
      apiVersion: "meta.pkg.crossplane.io/v1",
      kind: "Configuration",
      metadata: {
        name: "klutch-things",
        annotations: {
          "meta.crossplane.io/maintainer": "Klutch on Pulumi",
          "meta.crossplane.io/description": "things",
        },
      },
      spec: {
        crossplane: { version: ">=v1.17.0-0" },
        dependsOn: [{ function: "10.0.0.1:5000/klutch/function-klutch", version: ">=v0.0.0-0" }],
      },
    });
    assert.deepEqual(docs.slice(1), [XRD, COMPOSITION]);
  });

  it("writes YAML 1.1, as Crossplane's parser reads it: strings such as on, off, yes and no stay strings", () => {
    const enums = { ...XRD, spec: { enum: ["on", "off", "yes", "no", "y", "n", "true", "1.0"] } };
    const stream = configurationPackageYaml(spec([enums]));
    const docs = parseAllDocuments(stream, { version: "1.1" }).map(
      (d) => d.toJS() as Record<string, unknown>,
    );
    assert.deepEqual(docs[1], enums);
  });

  it("refuses what a Configuration may not carry, an object without a name and one given twice, naming it", () => {
    const crd = {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      metadata: { name: "x" },
    };
    assert.throws(
      () => configurationPackageYaml(spec([XRD, crd])),
      /klutch-things: objects\[1\] is a apiextensions\.k8s\.io\/v1\/CustomResourceDefinition; a Configuration carries only .*CompositeResourceDefinition and .*Composition/,
    );
    assert.throws(
      () => configurationPackageYaml(spec([{ ...XRD, metadata: {} }])),
      /objects\[0\] .* has no metadata\.name/,
    );
    assert.throws(
      () => configurationPackageYaml(spec([COMPOSITION, COMPOSITION])),
      /Composition thing is in it twice/,
    );
  });

  it("tags a stream by its content under the project's version, a pre-release any version admits", () => {
    const a = configurationPackageYaml(spec([XRD]));
    const b = configurationPackageYaml(spec([XRD, COMPOSITION]));
    assert.match(packageTag("0.1.0", a), /^v0\.1\.0-g[0-9a-f]{12}$/);
    assert.equal(packageTag("0.1.0", a), packageTag("v0.1.0", a));
    assert.notEqual(packageTag("0.1.0", a), packageTag("0.1.0", b));
  });

  it("takes the tag or digest off a reference, as Crossplane's lock names a source, keeping a registry's port", () => {
    assert.equal(
      packageSource("10.0.0.1:5000/klutch/function-klutch:v0.1.0-gabc"),
      "10.0.0.1:5000/klutch/function-klutch",
    );
    assert.equal(packageSource("10.0.0.1:5000/klutch/f@sha256:00"), "10.0.0.1:5000/klutch/f");
    assert.equal(packageSource("10.0.0.1:5000/klutch/f"), "10.0.0.1:5000/klutch/f");
  });

  it("annotates the one layer as the package's base and labels the config as xpkg build does", () => {
    const layer = { digest: "sha256:aa", size: 10, diffId: "sha256:bb" };
    const docs = packageImageDocuments(layer);
    const manifest = JSON.parse(docs.manifest) as {
      layers: { digest: string; annotations: Record<string, string> }[];
    };
    assert.deepEqual(
      manifest.layers.map((l) => [l.digest, l.annotations]),
      [["sha256:aa", { "io.crossplane.xpkg": "base" }]],
    );
    const config = JSON.parse(docs.config) as {
      config: { Labels: Record<string, string> };
      rootfs: { diff_ids: string[] };
    };
    assert.deepEqual(config.config.Labels, { "io.crossplane.xpkg:sha256:aa": "base" });
    assert.deepEqual(config.rootfs.diff_ids, ["sha256:bb"]);
    assert.equal(packageImageDocuments(layer).manifestDigest, docs.manifestDigest, "same layer, same digest");
  });
});
