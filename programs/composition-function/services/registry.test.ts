import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { A9S_BINDING_RESOURCE as COMPOSED_AS } from "../../../lib/dataservices/compositions.js";
import { SERVICE_INSTANCE_TYPES } from "../../../lib/dataservices/xrds.js";
import { connectorXrd } from "../../../lib/connector-api/xrd.js";
import { A9S_BINDING_RESOURCE } from "../a9s-binding.js";
import { DATA_SERVICES } from "./registry.js";

// The function's image holds only its own folder (host/local-clusters/images/function-image.ts),
// so what it shares with the compositions and the XRDs is written twice and checked here.
describe("the function's data services", () => {
  it("serve each of the XRD's serviceInstanceType values, once", () => {
    assert.deepEqual(DATA_SERVICES.map((s) => s.type).sort(), [...SERVICE_INSTANCE_TYPES].sort());
  });

  it("read the credentials of the composed binding the a9s composition names", () => {
    assert.equal(A9S_BINDING_RESOURCE, COMPOSED_AS);
  });

  it("each has its row in docs/data-services.md's table of keys and endpoints, with its InstanceType", () => {
    const docs = fs.readFileSync(path.join(__dirname, "..", "..", "..", "docs", "data-services.md"), "utf8");
    const rows = [...docs.matchAll(/^\| `([a-z0-9]+)` +\| ([^|]*?) +\|/gm)].map((m) => [m[1], m[2]]);
    assert.deepEqual(
      rows,
      DATA_SERVICES.map((s) => [s.type, s.instanceType]),
    );
  });

  it("each names its software as the connector's XRD admits an InstanceType (1 to 63 characters)", () => {
    const at = (o: unknown, ...keys: string[]): unknown =>
      keys.reduce((v, k) => (v as Record<string, unknown> | undefined)?.[k], o);
    const schema = at(
      connectorXrd("xtcpconnections-proxy").spec.versions[0],
      ...["schema", "openAPIV3Schema", "properties", "spec", "properties", "enhancements", "items"],
      ...["properties", "InstanceType"],
    ) as { minLength: number; maxLength: number };
    assert.ok(schema.maxLength > 0, "the XRD bounds an InstanceType");
    for (const s of DATA_SERVICES) {
      assert.ok(s.instanceType.length >= schema.minLength, s.type);
      assert.ok(s.instanceType.length <= schema.maxLength, s.type);
    }
  });

  it("each name at least one key an endpoint is read from, with a default port for bare hosts", () => {
    for (const s of DATA_SERVICES) {
      const refs = s.references([]);
      assert.ok(refs.length > 0, s.type);
      for (const r of refs.filter((r) => r.kind === "host" || r.kind === "hosts"))
        assert.ok(r.defaultPort !== undefined, `${s.type} ${r.key}`);
    }
  });
});
