import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { CROSSPLANE_UID, crossplaneSpec } from "./crossplane-image";
import { normalizeEntries } from "./oci-layout";

describe("klutch.local/crossplane: Crossplane core laid out as upstream's image", () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-xp-image-"));
  const bin = path.join(tmp, "bin");
  const cluster = path.join(tmp, "cluster");
  before(() => {
    fs.mkdirSync(bin);
    // Stands in for the toolchain's static binary: only its `--version` is read here.
    fs.writeFileSync(path.join(bin, "crossplane"), "#!/bin/sh\necho v1.20.11\n", { mode: 0o755 });
    for (const [dir, files] of [
      ["crds", ["pkg.crossplane.io_providers.yaml", "apiextensions.crossplane.io_compositions.yaml"]],
      ["webhookconfigurations", ["manifests.yaml", "usage.yaml"]],
    ] as const) {
      fs.mkdirSync(path.join(cluster, dir), { recursive: true });
      for (const f of files) fs.writeFileSync(path.join(cluster, dir, f), `# ${f}\n`);
      fs.writeFileSync(path.join(cluster, dir, "README.md"), "not a manifest\n");
    }
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const env = () => ({ PATH: bin, KLUTCH_CROSSPLANE_CLUSTER_DIR: cluster });

  it("puts the binary, /crds and /webhookconfigurations where the chart's `core init` reads them, as uid 65532", () => {
    const spec = crossplaneSpec("klutch.local/crossplane", env());
    assert.equal(spec.version, "1.20.11");
    assert.deepEqual(spec.config.Entrypoint, ["crossplane"]);
    assert.equal(spec.config.User, String(CROSSPLANE_UID));
    const files = normalizeEntries(spec.entries)
      .filter((e) => e.type === "file" || e.type === "content")
      .map((e) => e.path);
    assert.deepEqual(
      files.filter((f) => !f.startsWith("/etc/")),
      [
        "/crds/apiextensions.crossplane.io_compositions.yaml",
        "/crds/pkg.crossplane.io_providers.yaml",
        "/usr/local/bin/crossplane",
        "/webhookconfigurations/manifests.yaml",
        "/webhookconfigurations/usage.yaml",
      ].sort(),
    );
    const passwd = spec.entries.find((e) => e.path === "/etc/passwd");
    assert.ok(passwd && passwd.type === "content");
    assert.match(String(passwd.content), /^nonroot:x:65532:65532:/m);
  });

  it("refuses a binary that reports no version, and a missing cluster folder, saying how to build them", () => {
    fs.writeFileSync(path.join(bin, "crossplane"), "#!/bin/sh\necho oops\n", { mode: 0o755 });
    assert.throws(() => crossplaneSpec("r", env()), /printed no Crossplane version: oops/);
    fs.writeFileSync(path.join(bin, "crossplane"), "#!/bin/sh\necho v1.20.11\n", { mode: 0o755 });
    assert.throws(
      () => crossplaneSpec("r", { ...env(), KLUTCH_CROSSPLANE_CLUSTER_DIR: path.join(tmp, "nope") }),
      /names no Crossplane cluster folder: run `bash host\/scripts\/toolchain.sh build`/,
    );
  });
});
