import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { SDK_DIR, SDK_LANGUAGES, generateSdks, sdkDrift, sdkGenerator } from "../../provider/sdk-files";

/**
 * The committed SDKs (provider/sdk/<language>) are what the toolchain's generator
 * (toolchain/gen-sdk/main.go, Pulumi's codegen) makes from provider/schema.json, as
 * provider-schema.test.ts holds schema.json to the catalog. Uses the built generator (the
 * toolchain cache; built here when missing, ~1 min after the CLI); generating takes < 1 s.
 */
describe("klutch provider SDKs", function () {
  this.timeout(15 * 60_000);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-sdks-"));
  const generated = path.join(work, "generated");

  before(() => {
    sdkGenerator();
    generateSdks(generated);
  });
  after(() => fs.rmSync(work, { recursive: true, force: true }));

  it("provider/sdk is what the generator makes from provider/schema.json (run `npm run provider:sdks` after changing the schema)", () => {
    assert.deepEqual(sdkDrift(generated, SDK_DIR), []);
  });

  it("the drift check notices a changed, a missing and a left-over file", () => {
    const copy = path.join(work, "copy");
    fs.cpSync(generated, copy, { recursive: true });
    fs.appendFileSync(path.join(copy, "go", "klutch", "provider.go"), "// edited\n");
    fs.rmSync(path.join(copy, "nodejs", "network", "tcpProxy.ts"));
    fs.writeFileSync(path.join(copy, "python", "pulumi_klutch", "old.py"), "");
    assert.deepEqual(sdkDrift(generated, copy).sort(), [
      "go/klutch/provider.go: differs from what the generator makes",
      "nodejs/network/tcpProxy.ts: missing",
      "python/pulumi_klutch/old.py: not generated any more",
    ]);
  });

  it("each language's package names the plugin and version of the schema", () => {
    const schema = JSON.parse(fs.readFileSync(path.join(SDK_DIR, "..", "schema.json"), "utf8")) as {
      name: string;
      version: string;
    };
    const want = { resource: true, name: schema.name, version: schema.version };
    const pkg = JSON.parse(fs.readFileSync(path.join(generated, "nodejs", "package.json"), "utf8")) as {
      name: string;
      version: string;
      pulumi: unknown;
    };
    assert.equal(pkg.name, "@klutch/pulumi");
    assert.equal(pkg.version, schema.version);
    assert.deepEqual(pkg.pulumi, want);
    for (const file of ["python/pulumi_klutch/pulumi-plugin.json", "go/klutch/pulumi-plugin.json"])
      assert.deepEqual(JSON.parse(fs.readFileSync(path.join(generated, file), "utf8")), want, file);
    assert.match(
      fs.readFileSync(path.join(generated, "go", "go.mod"), "utf8"),
      /^module github\.com\/anynines\/klutch-pulumi\/provider\/sdk\/go$/m,
    );
    assert.deepEqual(fs.readdirSync(generated).sort(), [...SDK_LANGUAGES].sort());
  });

  it("a schema that does not bind fails with one message naming the language and the bad reference", () => {
    const bad = path.join(work, "bad.json");
    const resource = (ref: string) => ({
      name: "klutch",
      version: "0.1.0",
      resources: { "klutch:x:Y": { isComponent: true, inputProperties: { a: { $ref: ref } } } },
    });
    const fails = (ref: string, message: RegExp) => {
      fs.writeFileSync(bad, JSON.stringify(resource(ref)));
      assert.throws(
        () => generateSdks(path.join(work, "bad"), bad),
        (err: Error & { stderr?: string }) => {
          assert.match(String(err.stderr), message);
          return true;
        },
      );
    };
    // A type the schema does not define (a typo in the catalog).
    fails(
      "#/types/klutch:x:Missing",
      /klutch-gen-sdk: nodejs SDK: the schema does not bind: .*type klutch:x:Missing not found/,
    );
    // Another package's type: the generator loads no other packages.
    fails(
      "/kubernetes/v4.25.0/schema.json#/types/kubernetes:core/v1:Pod",
      /klutch-gen-sdk: nodejs SDK: .*the schema refers to package "kubernetes", but klutch-gen-sdk loads no other packages/,
    );
  });
});
