import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  addArchive,
  addBinary,
  failingGo,
  type Mirror,
  serveMirror,
  sha256,
} from "../../test/helpers/release-mirror";
import { repoRoot, toolchainEnv } from "../automation/toolchain";

const versions = fs.readFileSync(path.join(repoRoot, "host", "toolchain", "versions.env"), "utf8");
const pin = (name: string) => new RegExp(`^${name}=(\\S+)$`, "m").exec(versions)![1]!;
const [PULUMI, ETCD, XP] = [pin("PULUMI_VERSION"), pin("ETCD_VERSION"), pin("CROSSPLANE_LEGACY_VERSION")];
/** toolchain.sh build <parts> on an empty cache, the mirror named, a `go` that fails at once. */
function build(
  cache: string,
  mirror: string,
  fake: string,
  parts: string[],
): Promise<{ code: number; err: string }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    KLUTCH_TOOLCHAIN_CACHE: cache,
    KLUTCH_RELEASE_MIRROR: mirror,
    // The CLI comes from the mirror even where the machine has one on PATH.
    KLUTCH_PULUMI_FROM_PATH: "false",
    // Loopback only, whatever proxy the environment names.
    no_proxy: "127.0.0.1",
    NO_PROXY: "127.0.0.1",
  };
  env.PATH = `${fake}${path.delimiter}${process.env.PATH ?? ""}`;
  const child = spawn("bash", [path.join(repoRoot, "host", "scripts", "toolchain.sh"), "build", ...parts], {
    env,
  });
  let err = "";
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code: code ?? -1, err })));
}

describe("official release archives from a mirror (KLUTCH_RELEASE_MIRROR, host/scripts/toolchain-mirror.sh)", function () {
  this.timeout(120_000);
  const own = toolchainEnv().KLUTCH_TOOLCHAIN_CACHE!;
  const builtBy = (entry: string, bin: string) => path.join(own, entry, "bin", bin);
  let root = "";
  let cache = "";
  let fake = "";
  let mirror: Mirror;

  // Archives made from the toolchain's own builds, under their official names and layouts, with
  // checksums files in the shapes upstream publishes (a list, and a bare sum).
  before(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-mirror-"));
    const [pulumi, etcd, crank] = [
      builtBy(`pulumi-${PULUMI}`, "pulumi"),
      builtBy(`etcd-${ETCD}`, "etcd"),
      builtBy(`crossplane-cli-${XP}`, "crank"),
    ];
    for (const file of [pulumi, etcd, crank]) {
      assert.ok(fs.existsSync(file), `${file}: run \`bash host/scripts/toolchain.sh build\``);
    }
    const gh = path.join(root, "github.com");
    const p = path.join(gh, `pulumi/pulumi/releases/download/v${PULUMI}`);
    addArchive(
      p,
      `pulumi-v${PULUMI}-linux-x64.tar.gz`,
      "pulumi/pulumi",
      pulumi,
      `pulumi-${PULUMI}-checksums.txt`,
    );
    const e = path.join(gh, `etcd-io/etcd/releases/download/v${ETCD}`);
    addArchive(e, `etcd-v${ETCD}-linux-amd64.tar.gz`, `etcd-v${ETCD}-linux-amd64/etcd`, etcd, "SHA256SUMS");
    addBinary(path.join(root, `releases.crossplane.io/stable/v${XP}/bin/linux_amd64`), "crank", crank);
    mirror = await serveMirror(root);
  });
  after(() => {
    mirror.close();
    fs.rmSync(root, { recursive: true, force: true });
  });
  beforeEach(() => {
    cache = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-cache-"));
    fake = failingGo();
    mirror.asked.length = 0;
  });
  afterEach(() => [cache, fake].forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

  it("fetches each part's archive and checksums from the mirror, checks them, and builds nothing", async () => {
    const r = await build(cache, mirror.url, fake, ["pulumi", "etcd", "crossplane-cli"]);
    assert.equal(r.code, 0, r.err);
    assert.doesNotMatch(r.err, /no go here|: building/);
    for (const [entry, bin] of [
      [`pulumi-${PULUMI}`, "pulumi"],
      [`etcd-${ETCD}`, "etcd"],
      [`crossplane-cli-${XP}`, "crank"],
    ]) {
      assert.equal(sha256(path.join(cache, entry!, "bin", bin!)), sha256(builtBy(entry!, bin!)), bin);
      assert.match(
        fs.readFileSync(path.join(cache, entry!, ".complete"), "utf8"),
        /official release, from the mirror http:\/\/127\.0\.0\.1:/,
      );
    }
    // The dynamic provider host the project needs is written next to the CLI, as after a build.
    assert.ok(fs.existsSync(path.join(cache, `pulumi-${PULUMI}`, "bin", "pulumi-resource-pulumi-nodejs")));
    assert.ok(
      mirror.asked.includes(`github.com/etcd-io/etcd/releases/download/v${ETCD}/SHA256SUMS`),
      mirror.asked.join(" "),
    );
  });

  it("refuses a file whose checksum is not the published one, naming both sums and the fix", async () => {
    const sums = path.join(root, `releases.crossplane.io/stable/v${XP}/bin/linux_amd64/crank.sha256`);
    const good = fs.readFileSync(sums, "utf8");
    fs.writeFileSync(sums, "f".repeat(64));
    try {
      const r = await build(cache, mirror.url, fake, ["crossplane-cli"]);
      assert.notEqual(r.code, 0);
      const said = `checksum mismatch: crank from the release mirror (${mirror.url}/releases.crossplane.io/stable/v${XP}/bin/linux_amd64/crank) has SHA-256 ${good}, but crank.sha256 publishes ${"f".repeat(64)}; refused. Fix: replace the mirror's copy with the official file (https://releases.crossplane.io/stable/v${XP}/bin/linux_amd64/crank), or unset KLUTCH_RELEASE_MIRROR`;
      assert.ok(r.err.includes(said), r.err);
      assert.ok(
        !fs.existsSync(path.join(cache, `crossplane-cli-${XP}`, "bin", "crank")),
        "the refused file is not kept",
      );
    } finally {
      fs.writeFileSync(sums, good);
    }
  });

  it("builds from the Go module proxy what the mirror has not, saying so", async () => {
    const r = await build(cache, mirror.url, fake, ["kubernetes"]);
    assert.match(
      r.err,
      /not on the release mirror: http:\/\/127\.0\.0\.1:\d+\/dl\.k8s\.io\/release\/v[\d.]+\/bin\/linux\/amd64\/kube-apiserver\.sha256/,
    );
    assert.match(
      r.err,
      /kubernetes [\d.]+: not all on the release mirror; building it from the Go module proxy instead[\s\S]*no go here/,
    );
  });
});
