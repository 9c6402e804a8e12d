import { strict as assert } from "node:assert";
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { buildImage, normalizeEntries } from "./oci-layout";
import { wireguardSpec } from "./wireguard-image";

/** Every program the rendered gateway and client pods run (render-k8s.ts, wg-quick's own calls). */
const PROGRAMS = [
  "wireguard-go",
  "wg",
  "wg-quick",
  "nft",
  "socat",
  "ip",
  "sh",
  "bash",
  "readlink",
  "stat",
  "sort",
  "cat",
  "install",
  "sha256sum",
  "sleep",
];

describe("klutch.local/wireguard: the image of the rendered WireGuard pods", () => {
  const spec = wireguardSpec("klutch.local/wireguard");
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-wg-image-"));
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it("holds every program the pods execute, on PATH, with the Debian versions in its tag", () => {
    const paths = new Set(normalizeEntries(spec.entries).map((e) => e.path));
    const dirs = ["/usr/sbin", "/usr/bin", "/sbin", "/bin"];
    for (const program of PROGRAMS)
      assert.ok(
        dirs.some((d) => paths.has(`${d}/${program}`)),
        `${program} is in the image`,
      );
    assert.match(spec.version ?? "", /^[0-9.]+-.*-tools[0-9.]+-/);
    assert.deepEqual(spec.config.Entrypoint, ["/usr/bin/wg-quick"]);
  });

  it("runs them from its own root file system (chroot into the unpacked layer)", async function () {
    if (process.getuid?.() !== 0) this.skip(); // chroot needs root; the e2e runs as root
    const built = await buildImage(spec, path.join(tmp, "cache"));
    const out = path.join(tmp, "oci");
    fs.mkdirSync(out);
    execFileSync("tar", ["-xf", built.archive, "-C", out]);
    const root = path.join(tmp, "root");
    fs.mkdirSync(root);
    execFileSync("tar", ["-xf", path.join(out, "blobs", "sha256", built.layerDigest.slice(7)), "-C", root]);
    const run = (...argv: string[]) => {
      const r = spawnSync("chroot", [root, ...argv], {
        encoding: "utf8",
        env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" },
      });
      return { status: r.status, out: `${r.stdout}${r.stderr}` };
    };
    assert.match(run("wireguard-go", "--version").out, /wireguard-go v/);
    assert.match(run("wg", "--version").out, /wireguard-tools v/);
    assert.match(run("nft", "--version").out, /nftables v/);
    assert.match(run("socat", "-V").out, /socat version/);
    assert.match(run("ip", "-V").out, /iproute2/);
    // wg-quick is bash; without arguments it prints its usage and exits 1.
    const usage = run("wg-quick");
    assert.match(usage.out, /Usage: wg-quick/);
    // The gateway's reload loop, line for line the commands render-k8s.ts runs.
    const loop = run(
      "/bin/sh",
      "-c",
      "printf x > /tmp/a && install -m 0600 /tmp/a /etc/wireguard/b && cat /etc/wireguard/b | sha256sum && sleep 0 && stat -c %a /etc/wireguard/b && printf '2\\n1\\n' | sort && readlink -f /bin/sh",
    );
    assert.equal(loop.status, 0, loop.out);
    assert.match(
      loop.out,
      /^2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881 +-\n600\n1\n2\n\/usr\/bin\/dash\n$/,
    );
  });
});
