import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { execFileSync } from "node:child_process";
import { SDK_DIR, SDK_LANGUAGES, SDK_LOGO, generateSdks, sdkDrift, sdkGenerators } from "./sdk-files";
import { SCHEMA_FILE } from "./schema-file";
import { PLUGIN_DOWNLOAD_URL } from "../../lib/release/publication";

/**
 * The committed SDKs (sdk/<language>) are what the toolchain's generators
 * (host/toolchain/gen-sdk, Pulumi's codegen; .NET from its own build) make from programs/klutch-provider/schema.json, as
 * provider-schema.test.ts holds schema.json to the catalog. Uses the built generator (the
 * toolchain cache; built here when missing, ~1 min after the CLI); generating takes < 1 s.
 */
describe("klutch provider SDKs", function () {
  this.timeout(15 * 60_000);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-sdks-"));
  const generated = path.join(work, "generated");

  before(() => {
    sdkGenerators();
    generateSdks(generated);
  });
  after(() => fs.rmSync(work, { recursive: true, force: true }));

  it("sdk is what the generator makes from programs/klutch-provider/schema.json (run `npm run provider:sdks` after changing the schema)", () => {
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

  it("each language's package names the plugin, version and download URL of the schema", () => {
    const schema = JSON.parse(fs.readFileSync(SCHEMA_FILE, "utf8")) as {
      name: string;
      version: string;
      pluginDownloadURL: string;
    };
    // Where the release is published (lib/release/publication.ts), so the engine finds the plugin.
    assert.equal(schema.pluginDownloadURL, PLUGIN_DOWNLOAD_URL);
    const want = { resource: true, name: schema.name, version: schema.version, server: PLUGIN_DOWNLOAD_URL };
    const pkg = JSON.parse(fs.readFileSync(path.join(generated, "nodejs", "package.json"), "utf8")) as {
      name: string;
      version: string;
      pulumi: unknown;
    };
    assert.equal(pkg.name, "@klutch/pulumi");
    assert.equal(pkg.version, schema.version);
    assert.deepEqual(pkg.pulumi, want);
    for (const file of [
      "python/pulumi_klutch/pulumi-plugin.json",
      "go/klutch/pulumi-plugin.json",
      "dotnet/pulumi-plugin.json",
    ])
      assert.deepEqual(JSON.parse(fs.readFileSync(path.join(generated, file), "utf8")), want, file);
    // Every resource the SDKs register carries it too (the engine's download on first use).
    for (const [file, line] of [
      ["nodejs/utilities.ts", `pluginDownloadURL: "${PLUGIN_DOWNLOAD_URL}"`],
      ["python/pulumi_klutch/_utilities.py", `return "${PLUGIN_DOWNLOAD_URL}"`],
      ["go/klutch/internal/pulumiUtilities.go", `pulumi.PluginDownloadURL("${PLUGIN_DOWNLOAD_URL}")`],
      ["dotnet/Network/TcpProxy.cs", `PluginDownloadURL = "${PLUGIN_DOWNLOAD_URL}"`],
    ] as const)
      assert.ok(fs.readFileSync(path.join(generated, file), "utf8").includes(line), `${file}: no ${line}`);
    assert.match(
      fs.readFileSync(path.join(generated, "go", "go.mod"), "utf8"),
      /^module github\.com\/anynines\/klutch-pulumi\/sdk\/go$/m,
    );
    assert.deepEqual(fs.readdirSync(generated).sort(), [...SDK_LANGUAGES].sort());
  });

  it("the .NET package: a project on the Pulumi NuGet package, the schema's namespaces, and the logo from the repository", () => {
    const project = fs.readFileSync(path.join(generated, "dotnet", "Anynines.Klutch.csproj"), "utf8");
    assert.match(project, /<PackageReference Include="Pulumi" Version="3\.\*" \/>/);
    assert.match(project, /<Version>0\.1\.0<\/Version>/);
    assert.match(project, /<Authors>anynines<\/Authors>/);
    assert.match(
      fs.readFileSync(path.join(generated, "dotnet", "Network", "TcpProxy.cs"), "utf8"),
      /namespace Anynines\.Klutch\.Network\b[\s\S]*class TcpProxy : global::Pulumi\.ComponentResource/,
    );
    // The generator would download a logo; it ships programs/klutch-provider/logo.png instead.
    assert.ok(fs.readFileSync(path.join(generated, "dotnet", "logo.png")).equals(fs.readFileSync(SDK_LOGO)));
  });

  it("the .NET generator makes no network request: a schema's logoUrl is served from -logo, and without it the run fails naming the URL", () => {
    const schema = JSON.parse(fs.readFileSync(SCHEMA_FILE, "utf8")) as Record<string, unknown>;
    const withLogo = path.join(work, "logo-url.json");
    fs.writeFileSync(withLogo, JSON.stringify({ ...schema, logoUrl: "https://example.invalid/klutch.png" }));
    const dotnet = sdkGenerators().KLUTCH_GEN_SDK_DOTNET;
    const out = path.join(work, "logo-url");
    execFileSync(dotnet, ["-schema", withLogo, "-out", out, "-logo", SDK_LOGO], { stdio: "pipe" });
    assert.ok(fs.readFileSync(path.join(out, "dotnet", "logo.png")).equals(fs.readFileSync(SDK_LOGO)));
    assert.throws(
      () => execFileSync(dotnet, ["-schema", withLogo, "-out", out], { stdio: "pipe", encoding: "utf8" }),
      (err: Error & { stderr?: string }) => {
        assert.match(
          String(err.stderr),
          /klutch-gen-sdk-dotnet: dotnet SDK: .*asks for the package logo \(https:\/\/example\.invalid\/klutch\.png\): pass -logo <file\.png>/,
        );
        return true;
      },
    );
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
