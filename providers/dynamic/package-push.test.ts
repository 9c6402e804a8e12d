import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as https from "node:https";
import * as os from "node:os";
import * as path from "node:path";
import * as zlib from "node:zlib";
import { extract } from "tar-stream";
import { ensureCa } from "../../host/local-clusters/host/pki";
import { LocalRegistry, type RegistryInfo } from "../../host/local-clusters/registry/registry";
import { configurationPackageYaml, packageTag } from "../../lib/crossplane/configuration-package";
import { checkPackagePush, pushPackage, type PackagePushInputs } from "./package-push";

function get(url: string, ca: string, accept?: string): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    https
      .get(url, { ca, agent: false, headers: accept ? { Accept: accept } : {} }, (res) => {
        const parts: Buffer[] = [];
        res.on("data", (c: Buffer) => parts.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts) }));
      })
      .on("error", reject);
  });
}

async function tarEntries(tar: Buffer): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const ex = extract();
  const done = new Promise<void>((resolve, reject) => {
    ex.on("entry", (h, stream, next) => {
      const parts: Buffer[] = [];
      stream.on("data", (c: Buffer) => parts.push(c));
      stream.on("end", () => {
        out[h.name] = Buffer.concat(parts).toString();
        next();
      });
    });
    ex.on("finish", resolve);
    ex.on("error", reject);
  });
  ex.end(tar);
  await done;
  return out;
}

const PACKAGE_YAML = configurationPackageYaml({
  name: "klutch-test",
  description: "a test package",
  crossplaneVersion: ">=v1.17.0-0",
  dependsOn: [],
  objects: [
    {
      apiVersion: "apiextensions.crossplane.io/v1",
      kind: "Composition",
      metadata: { name: "c" },
      spec: { compositeTypeRef: { apiVersion: "example.org/v1", kind: "XThing" }, mode: "Pipeline" },
    },
  ],
});

describe("PackagePush (a real OCI registry, Debian's docker-registry on loopback)", function () {
  this.timeout(60_000);
  let dir: string;
  let registry: LocalRegistry;
  let info: RegistryInfo;
  let inputs: PackagePushInputs;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "package-push-"));
    registry = new LocalRegistry(dir, process.env);
    info = await registry.up([], new Set());
    inputs = {
      registry: `127.0.0.1:${info.port}`,
      repository: "klutch/klutch-test",
      tag: packageTag("0.1.0", PACKAGE_YAML),
      caBundle: fs.readFileSync(info.caCert, "utf8"),
      packageYaml: PACKAGE_YAML,
    };
  });
  after(async () => {
    await registry.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("pushes a manifest whose one annotated layer holds package.yaml, as Crossplane's image backend reads it", async () => {
    const outs = await pushPackage(inputs);
    assert.equal(outs.reference, `127.0.0.1:${info.port}/klutch/klutch-test:${inputs.tag}`);
    const base = `https://127.0.0.1:${info.port}/v2/klutch/klutch-test`;
    const manifest = await get(
      `${base}/manifests/${inputs.tag}`,
      inputs.caBundle,
      "application/vnd.oci.image.manifest.v1+json",
    );
    assert.equal(manifest.status, 200);
    const m = JSON.parse(manifest.body.toString()) as {
      layers: { digest: string; mediaType: string; annotations: Record<string, string> }[];
    };
    assert.equal(m.layers.length, 1);
    assert.deepEqual(m.layers[0]!.annotations, { "io.crossplane.xpkg": "base" });
    const blob = await get(`${base}/blobs/${m.layers[0]!.digest}`, inputs.caBundle);
    assert.equal(blob.status, 200);
    assert.deepEqual(await tarEntries(zlib.gunzipSync(blob.body)), { "package.yaml": PACKAGE_YAML });
  });

  it("pushes the same stream to the same bytes, so a second push changes nothing", async () => {
    const a = await pushPackage(inputs);
    const b = await pushPackage(inputs);
    assert.equal(a.manifestDigest, b.manifestDigest);
  });

  it("fails naming the registry, repository and tag when the registry is not trusted", async () => {
    const other = await ensureCa(path.join(dir, "other-ca"), "not-the-registry-ca");
    await assert.rejects(
      pushPackage({ ...inputs, caBundle: fs.readFileSync(other.caCert, "utf8") }),
      /pushing 127\.0\.0\.1:\d+\/klutch\/klutch-test:v0\.1\.0-g[0-9a-f]{12}: .*certificate/,
    );
  });

  it("checks every input before anything is pushed, naming the field and the fix", () => {
    const failures = checkPackagePush({
      registry: "https://x",
      repository: "Klutch/X",
      tag: "",
      caBundle: "",
      packageYaml: "",
    });
    assert.deepEqual(
      failures.map((f) => f.property),
      ["registry", "repository", "tag", "caBundle", "packageYaml"],
    );
    assert.match(failures[0]!.reason, /registry "https:\/\/x" is not host\[:port\]/);
    assert.deepEqual(checkPackagePush(inputs as unknown as Record<string, unknown>), []);
  });
});
