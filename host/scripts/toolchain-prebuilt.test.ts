import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { failingGo } from "../../test/helpers/release-mirror";
import { repoRoot, toolchainEnv } from "../automation/toolchain";

const SCRIPTS = path.join(repoRoot, "host", "scripts");
const pinned = /^PULUMI_VERSION=(\S+)$/m.exec(
  fs.readFileSync(path.join(repoRoot, "host", "toolchain", "versions.env"), "utf8"),
)![1]!;

/** Runs a function of toolchain-prebuilt.sh in bash, with toolchain.sh's log and die. */
function shell(fn: string, ...args: string[]): { code: number | null; out: string } {
  const prelude = `log() { echo "$*" >&2; }; die() { echo "error: $*" >&2; exit 1; }; source "${SCRIPTS}/toolchain-prebuilt.sh";`;
  const r = spawnSync("bash", ["-c", `${prelude} ${fn} "$@"`, "_", ...args], { encoding: "utf8" });
  return { code: r.status, out: r.stdout.trim() };
}

const SUM = "0f".repeat(32);
const OTHER = "a1".repeat(32);

describe("what setup takes instead of building (host/scripts/toolchain-prebuilt.sh)", () => {
  describe("checksum_in: the sum a published checksums file gives for a file", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-sums-"));
    after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const sumOf = (text: string, name: string) => {
      const file = path.join(dir, "sums");
      fs.writeFileSync(file, text);
      return shell("checksum_in", file, name).out;
    };

    it("a list of `<sum>  <name>` lines (SHA256SUMS, *checksums.txt): the named file's, binary mode and ./ too", () => {
      const list = `${OTHER}  etcd-v3.7.3-darwin-arm64.zip\n${SUM.toUpperCase()}  etcd-v3.7.3-linux-amd64.tar.gz\n`;
      assert.equal(sumOf(list, "etcd-v3.7.3-linux-amd64.tar.gz"), SUM);
      assert.equal(sumOf(`${OTHER} *a.tar.gz\r\n${SUM} *pulumi.tar.gz\r\n`, "pulumi.tar.gz"), SUM);
      assert.equal(sumOf(`${SUM}  ./crank\n`, "crank"), SUM);
    });

    it("a file of the bare sum (Kubernetes' and Crossplane's <file>.sha256), newline or not", () => {
      assert.equal(sumOf(SUM, "kubectl"), SUM);
      assert.equal(sumOf(`${SUM}\n\n`, "kubectl"), SUM);
    });

    it("nothing for a file the list does not name, or for what is no sum", () => {
      assert.equal(sumOf(`${OTHER}  other.tar.gz\n`, "etcd.tar.gz"), "");
      assert.equal(sumOf(`${SUM}\n${OTHER}\n`, "kubectl"), "", "two bare sums: which one is unknown");
      assert.equal(sumOf("<html>Not Found</html>\n", "kubectl"), "");
      assert.equal(sumOf(`${SUM.slice(1)}\n`, "kubectl"), "");
    });
  });

  describe("pulumi_version_accepted: a release of the pinned major, the pinned version or newer", () => {
    it("accepts the pinned version and newer releases of its major", () => {
      for (const v of ["v3.276.0", "3.276.0", "v3.276.1", "v3.300.0"]) {
        assert.deepEqual(shell("pulumi_version_accepted", v, "3.276.0"), {
          code: 0,
          out: "within the accepted >=3.276.0 <4.0.0",
        });
      }
    });

    it("refuses older releases, another major, pre-releases, dev builds and no version", () => {
      for (const v of [
        "v3.275.9",
        "v3.26.0",
        "v2.999.0",
        "v4.0.0",
        "v3.277.0-alpha.1",
        "v3.276.0+dirty",
        "",
      ]) {
        const r = shell("pulumi_version_accepted", v, "3.276.0");
        assert.equal(r.code, 1, v);
        assert.match(
          r.out,
          /(outside the accepted|not a release version; accepted:) >=3\.276\.0 <4\.0\.0/,
          v,
        );
      }
    });
  });

  describe("a pulumi CLI on PATH (toolchain.sh build pulumi, an empty cache)", () => {
    let cache = "";
    let fake = "";
    beforeEach(() => {
      cache = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-cache-"));
      fake = failingGo();
    });
    afterEach(() => [cache, fake].forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
    const build = (pathDirs: string[], extra: NodeJS.ProcessEnv = {}) => {
      // Whatever the machine's environment sets: no mirror, the CLI on PATH taken unless `extra` says.
      const env: NodeJS.ProcessEnv = { ...process.env, KLUTCH_TOOLCHAIN_CACHE: cache };
      delete env.KLUTCH_RELEASE_MIRROR;
      delete env.KLUTCH_PULUMI_FROM_PATH;
      Object.assign(env, extra, { PATH: [fake, ...pathDirs, process.env.PATH].join(path.delimiter) });
      const r = spawnSync("bash", [path.join(SCRIPTS, "toolchain.sh"), "build", "pulumi"], {
        encoding: "utf8",
        env,
      });
      return { code: r.status, err: r.stderr };
    };

    it("the toolchain's own CLI put on PATH is used as it is: nothing built, nothing in the cache", function () {
      this.timeout(60_000);
      const own = path.join(toolchainEnv().KLUTCH_TOOLCHAIN_CACHE!, `pulumi-${pinned}`, "bin");
      assert.ok(
        fs.existsSync(path.join(own, "pulumi")),
        `${own}/pulumi: run \`bash host/scripts/toolchain.sh build\``,
      );
      const r = build([own]);
      assert.equal(r.code, 0, r.err);
      const used = `pulumi on PATH: ${own}/pulumi (v${pinned}, within the accepted >=${pinned} <4.0.0): used as it is`;
      assert.ok(r.err.includes(used), r.err);
      assert.doesNotMatch(r.err, /building|no go here/);
      assert.ok(!fs.existsSync(path.join(cache, `pulumi-${pinned}`)));
      // And the environment the project runs pulumi in finds that CLI.
      const env = toolchainEnv({
        ...process.env,
        KLUTCH_TOOLCHAIN_CACHE: cache,
        PATH: `${own}:/usr/bin:/bin`,
      });
      const found = spawnSync("sh", ["-c", "command -v pulumi"], { encoding: "utf8", env }).stdout.trim();
      assert.equal(found, path.join(own, "pulumi"));
    });

    it("an older CLI, or any with KLUTCH_PULUMI_FROM_PATH=false, is not used: the pinned CLI is built", () => {
      const old = path.join(fake, "old");
      fs.mkdirSync(old);
      fs.writeFileSync(path.join(old, "pulumi"), "#!/bin/sh\necho v3.275.0\n", { mode: 0o755 });
      fs.writeFileSync(path.join(old, "pulumi-resource-pulumi-nodejs"), "#!/bin/sh\n", { mode: 0o755 });
      const r = build([old]);
      assert.notEqual(r.code, 0);
      assert.ok(
        r.err.includes(`pulumi on PATH (${old}/pulumi) is v3.275.0, outside the accepted >=${pinned}`),
        r.err,
      );
      assert.match(r.err, /building the CLI from github\.com\/pulumi\/pulumi\/pkg\/v3[\s\S]*no go here/);
      fs.writeFileSync(path.join(old, "pulumi"), `#!/bin/sh\necho v${pinned}\n`, { mode: 0o755 });
      const off = build([old], { KLUTCH_PULUMI_FROM_PATH: "false" });
      assert.doesNotMatch(off.err, /pulumi on PATH/);
      assert.match(off.err, /building the CLI/);
    });
  });
});
