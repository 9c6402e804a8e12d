import { strict as assert } from "node:assert";
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { repoRoot, toolchainEnv } from "../automation/toolchain";

const versions = fs.readFileSync(path.join(repoRoot, "host", "toolchain", "versions.env"), "utf8");
const pin = (name: string) => new RegExp(`^${name}=(\\S+)$`, "m").exec(versions)![1]!;
const [PULUMI, ETCD, XP] = [pin("PULUMI_VERSION"), pin("ETCD_VERSION"), pin("CROSSPLANE_LEGACY_VERSION")];
const sha256 = (file: string) => createHash("sha256").update(fs.readFileSync(file)).digest("hex");

/** A release mirror on loopback: <root>/<upstream host>/<path>, and the paths asked for. */
async function serve(root: string): Promise<{ url: string; asked: string[]; close: () => void }> {
  const asked: string[] = [];
  const server = http.createServer((req, res) => {
    const file = path.join(root, decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname));
    asked.push(path.relative(root, file));
    if (!file.startsWith(root) || !fs.existsSync(file)) return void res.writeHead(404).end("Not Found");
    res.writeHead(200);
    fs.createReadStream(file).pipe(res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, asked, close: () => server.close() };
}

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
  let mirror: Awaited<ReturnType<typeof serve>>;

  // Archives made from the toolchain's own builds, under their official names and layouts, with
  // checksums files in the shapes upstream publishes (a list, and a bare sum).
  before(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-mirror-"));
    const pulumi = path.join(root, `github.com/pulumi/pulumi/releases/download/v${PULUMI}`);
    const etcd = path.join(root, `github.com/etcd-io/etcd/releases/download/v${ETCD}`);
    const crank = path.join(root, `releases.crossplane.io/stable/v${XP}/bin/linux_amd64`);
    for (const [dir, member, from] of [
      [pulumi, "pulumi/pulumi", builtBy(`pulumi-${PULUMI}`, "pulumi")],
      [etcd, `etcd-v${ETCD}-linux-amd64/etcd`, builtBy(`etcd-${ETCD}`, "etcd")],
    ] as const) {
      assert.ok(fs.existsSync(from), `${from}: run \`bash host/scripts/toolchain.sh build\``);
      fs.mkdirSync(path.join(dir, path.dirname(member)), { recursive: true });
      fs.symlinkSync(from, path.join(dir, member));
    }
    const tgz = (dir: string, name: string, top: string) =>
      execFileSync("bash", [
        "-c",
        `cd "${dir}" && tar -chf - "${top}" | gzip -1 > "${name}" && rm -rf "${top}"`,
      ]);
    tgz(pulumi, `pulumi-v${PULUMI}-linux-x64.tar.gz`, "pulumi");
    tgz(etcd, `etcd-v${ETCD}-linux-amd64.tar.gz`, `etcd-v${ETCD}-linux-amd64`);
    const listed = (dir: string, name: string) =>
      `${"0".repeat(64)}  other.zip\n${sha256(path.join(dir, name))}  ${name}\n`;
    fs.writeFileSync(
      path.join(pulumi, `pulumi-${PULUMI}-checksums.txt`),
      listed(pulumi, `pulumi-v${PULUMI}-linux-x64.tar.gz`),
    );
    fs.writeFileSync(path.join(etcd, "SHA256SUMS"), listed(etcd, `etcd-v${ETCD}-linux-amd64.tar.gz`));
    fs.mkdirSync(crank, { recursive: true });
    fs.symlinkSync(builtBy(`crossplane-cli-${XP}`, "crank"), path.join(crank, "crank"));
    fs.writeFileSync(path.join(crank, "crank.sha256"), sha256(path.join(crank, "crank")));
    mirror = await serve(root);
  });
  after(() => {
    mirror.close();
    fs.rmSync(root, { recursive: true, force: true });
  });
  beforeEach(() => {
    cache = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-cache-"));
    fake = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-fake-"));
    fs.writeFileSync(path.join(fake, "go"), '#!/bin/sh\necho "no go here: go $*" >&2\nexit 1\n', {
      mode: 0o755,
    });
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
