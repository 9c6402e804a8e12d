import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { parse } from "yaml";
import { backupXrd, restoreXrd } from "./backup-xrds";

/** Upstream's file (anynines/klutchio 0b4539e crossplane-api/api/common/), as test data. */
const upstream = (file: string) =>
  parse(fs.readFileSync(path.join(__dirname, "../../test/fixtures/klutchio", file), "utf8")) as Record<
    string,
    any
  >;

/**
 * Upstream's XRD as it reaches the API server: its `supported:` key only holds YAML anchors and
 * is not part of the schema, and an enum is a set (the restore's lists `messaging` twice).
 */
function asServed(xrd: Record<string, any>): Record<string, any> {
  const copy = structuredClone(xrd);
  for (const v of copy.spec.versions) {
    delete v.schema.openAPIV3Schema.supported;
    const type = v.schema.openAPIV3Schema.properties.spec.properties.serviceInstanceType;
    type.enum = [...new Set(type.enum)];
    // Upstream's multi-line YAML rules fold to one line with the same words.
    for (const rule of v.schema.openAPIV3Schema.properties.spec["x-kubernetes-validations"])
      rule.rule = rule.rule.replace(/\s+/g, " ").trim();
  }
  return copy;
}
const normalised = (xrd: Record<string, unknown>) => {
  const copy = structuredClone(xrd) as Record<string, any>;
  delete copy.metadata.labels;
  for (const v of copy.spec.versions)
    for (const rule of v.schema.openAPIV3Schema.properties.spec["x-kubernetes-validations"])
      rule.rule = rule.rule.replace(/\s+/g, " ").trim();
  return copy;
};

describe("upstream's Backup and Restore XRDs (pure)", () => {
  it("XBackup/Backup is upstream's backup_definition.yaml, field for field", () => {
    assert.deepEqual(normalised(backupXrd()), asServed(upstream("backup_definition.yaml")));
  });

  it("XRestore/Restore is upstream's restore_definition.yaml, field for field", () => {
    assert.deepEqual(normalised(restoreXrd()), asServed(upstream("restore_definition.yaml")));
  });

  it("carries the stack's labels", () => {
    assert.deepEqual((backupXrd({ a: "b" }) as any).metadata.labels, { a: "b" });
  });
});
