import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { haproxySpec } from "./catalog";
import { debianPostgres, parseLdd } from "./host-rootfs";
import * as zlib from "node:zlib";
import {
  buildImage,
  imageDocuments,
  normalizeEntries,
  sha256,
  tagFor,
  writeReleaseImage,
  type ImageSpec,
} from "./oci-layout";

describe("OCI image writer (pure parts and a real archive)", () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-oci-"));
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it("orders entries parents first, adds missing parent directories, refuses duplicates and relative paths", () => {
    const entries = normalizeEntries([
      { type: "content", path: "/usr/sbin/tool", mode: 0o755, content: "x" },
      { type: "symlink", path: "/bin", target: "usr/bin" },
      { type: "dir", path: "/tmp", mode: 0o1777 },
    ]);
    assert.deepEqual(
      entries.map((e) => `${e.type} ${e.path}`),
      ["symlink /bin", "dir /tmp", "dir /usr", "dir /usr/sbin", "content /usr/sbin/tool"],
    );
    assert.throws(
      () =>
        normalizeEntries([
          { type: "content", path: "/a", mode: 0o644, content: "1" },
          { type: "content", path: "/a", mode: 0o644, content: "2" },
        ]),
      /listed twice/,
    );
    assert.throws(() => normalizeEntries([{ type: "dir", path: "relative" }]), /absolute/);
  });

  it("makes tags from a version and the manifest digest, within the tag alphabet", () => {
    assert.equal(tagFor("2.6.12-1+deb12u4", "sha256:3ecabd73653274691d49"), "2.6.12-1_deb12u4-3ecabd736532");
    assert.match(tagFor("~weird version", `sha256:${"a".repeat(64)}`), /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/);
  });

  it("links config, manifest and index by digest and names the image for containerd", () => {
    const layer = { digest: sha256("layer"), size: 5 };
    const docs = imageDocuments(
      { repository: "klutch.local/x", config: { Entrypoint: ["/x"] } },
      layer,
      (d) => tagFor("1", d),
    );
    const config = JSON.parse(docs.config);
    assert.deepEqual(config.rootfs, { type: "layers", diff_ids: [layer.digest] });
    assert.equal(config.architecture, "amd64");
    const manifest = JSON.parse(docs.manifest);
    assert.equal(manifest.config.digest, sha256(docs.config));
    assert.deepEqual(manifest.layers, [
      { mediaType: "application/vnd.oci.image.layer.v1.tar", digest: layer.digest, size: 5 },
    ]);
    assert.equal(docs.manifestDigest, sha256(docs.manifest));
    const index = JSON.parse(docs.index);
    assert.equal(index.manifests[0].digest, docs.manifestDigest);
    assert.equal(index.manifests[0].annotations["io.containerd.image.name"], docs.reference);
    assert.equal(docs.reference, `klutch.local/x:1-${docs.manifestDigest.slice(7, 19)}`);
  });

  it("gives the HAProxy image the official image's stop signal, HAProxy's graceful stop", () => {
    // With SIGTERM a proxy pod, HAProxy as its PID 1 without a handler, waited out its grace period.
    const docs = imageDocuments(haproxySpec(), { digest: sha256("layer"), size: 5 }, (d) => tagFor("1", d));
    assert.equal(JSON.parse(docs.config).config.StopSignal, "SIGUSR1");
  });

  it("writes an OCI layout tar whose blobs match their digests, the same bytes every time, cached by content", async () => {
    const source = path.join(tmp, "hello.sh");
    fs.writeFileSync(source, "#!/bin/sh\necho hello\n");
    const spec: ImageSpec = {
      repository: "klutch.local/hello",
      version: "1",
      config: { Entrypoint: ["/hello.sh"] },
      entries: [
        { type: "file", path: "/hello.sh", mode: 0o755, source },
        { type: "content", path: "/etc/motd", mode: 0o644, content: "hi\n" },
      ],
    };
    const first = await buildImage(spec, path.join(tmp, "cache"));
    assert.equal(first.built, true);
    const again = await buildImage(spec, path.join(tmp, "cache"));
    assert.deepEqual({ ...again, built: true }, first, "same content, same image");
    assert.equal(again.built, false);

    const out = path.join(tmp, "unpacked");
    fs.mkdirSync(out);
    execFileSync("tar", ["-xf", first.archive, "-C", out]);
    assert.deepEqual(JSON.parse(fs.readFileSync(path.join(out, "oci-layout"), "utf8")), {
      imageLayoutVersion: "1.0.0",
    });
    for (const blob of fs.readdirSync(path.join(out, "blobs", "sha256"))) {
      const bytes = fs.readFileSync(path.join(out, "blobs", "sha256", blob));
      assert.equal(sha256(bytes), `sha256:${blob}`, "blob named by its digest");
    }
    const layer = path.join(out, "blobs", "sha256", first.layerDigest.slice(7));
    const listing = execFileSync("tar", ["-tvf", layer], { encoding: "utf8" });
    assert.match(listing, /^-rwxr-xr-x 0\/0 +\d+ 1970-01-01 00:00 hello\.sh$/m);
    assert.match(listing, /^drwxr-xr-x 0\/0 .* etc\/$/m);

    fs.writeFileSync(source, "#!/bin/sh\necho changed\n");
    const changed = await buildImage(spec, path.join(tmp, "cache"));
    assert.equal(changed.built, true);
    assert.notEqual(changed.reference, first.reference, "new content, new tag");
  });

  it("writes a release's image with a zstd layer: the config lists the tar's digest, the manifest the compressed blob's; same bytes twice", async () => {
    const spec = {
      repository: "registry.example.com/klutch/hello",
      config: { Entrypoint: ["/hello.sh"] },
      entries: [
        { type: "content" as const, path: "/hello.sh", mode: 0o755, content: "#!/bin/sh\necho hi\n" },
      ],
    };
    const files = ["a", "b"].map((n) => path.join(tmp, `release-${n}.oci.tar`));
    const [image, again] = [
      await writeReleaseImage(spec, "v1.2.3", files[0]!),
      await writeReleaseImage(spec, "v1.2.3", files[1]!),
    ];
    assert.deepEqual(again, image);
    assert.ok(fs.readFileSync(files[0]!).equals(fs.readFileSync(files[1]!)), "the same bytes");
    assert.equal(image.reference, "registry.example.com/klutch/hello:v1.2.3");

    const out = path.join(tmp, "release-unpacked");
    fs.mkdirSync(out);
    execFileSync("tar", ["-xf", files[0]!, "-C", out]);
    const blob = (digest: string) => fs.readFileSync(path.join(out, "blobs", "sha256", digest.slice(7)));
    const index = JSON.parse(fs.readFileSync(path.join(out, "index.json"), "utf8"));
    assert.equal(index.manifests[0].digest, image.manifestDigest);
    assert.equal(index.manifests[0].annotations["io.containerd.image.name"], image.reference);
    assert.equal(index.manifests[0].annotations["org.opencontainers.image.ref.name"], "v1.2.3");
    const manifest = JSON.parse(blob(image.manifestDigest).toString());
    const [layer] = manifest.layers;
    assert.equal(layer.mediaType, "application/vnd.oci.image.layer.v1.tar+zstd");
    const compressed = blob(layer.digest);
    assert.equal(sha256(compressed), layer.digest);
    assert.equal(compressed.length, layer.size);
    const tar = zlib.zstdDecompressSync(compressed);
    assert.equal(sha256(tar), image.diffId);
    assert.deepEqual(JSON.parse(blob(manifest.config.digest).toString()).rootfs.diff_ids, [image.diffId]);
    fs.writeFileSync(path.join(tmp, "layer.tar"), tar);
    assert.match(
      execFileSync("tar", ["-tvf", path.join(tmp, "layer.tar")], { encoding: "utf8" }),
      /^-rwxr-xr-x 0\/0 +\d+ 1970-01-01 00:00 hello\.sh$/m,
    );
  });

  it("a new archive of a repository drops its older ones but the newest three; other repositories keep theirs", async () => {
    const cache = path.join(tmp, "pruned");
    const build = (repository: string, content: string) =>
      buildImage(
        {
          repository: `klutch.local/${repository}`,
          version: "1",
          config: {},
          entries: [{ type: "content", path: "/etc/motd", mode: 0o644, content }],
        },
        cache,
      );
    const other = await build("other", "kept\n");
    const archives: string[] = [];
    for (const n of [1, 2, 3, 4, 5]) {
      archives.push((await build("changing", `change ${n}\n`)).archive);
      // Distinct modification times, newest last.
      fs.utimesSync(archives.at(-1)!, n, n);
    }
    const left = fs.readdirSync(cache).filter((f) => f.endsWith(".oci.tar"));
    assert.deepEqual(left.sort(), [other.archive, ...archives.slice(2)].map((a) => path.basename(a)).sort());
  });

  it("builds of the same image at once in one process all succeed with one archive (up starts every node at once)", async () => {
    const spec: ImageSpec = {
      repository: "klutch.local/same",
      version: "1",
      config: {},
      entries: [{ type: "content", path: "/etc/motd", mode: 0o644, content: "same\n" }],
    };
    const cache = path.join(tmp, "concurrent");
    const results = await Promise.all([1, 2, 3].map(() => buildImage(spec, cache)));
    assert.equal(new Set(results.map((r) => r.archive)).size, 1);
    assert.equal(new Set(results.map((r) => r.reference)).size, 1);
    assert.deepEqual(
      fs.readdirSync(cache).filter((f) => f.includes(".tmp-")),
      [],
      "no scratch file left behind",
    );
    execFileSync("tar", ["-tf", results[0]!.archive]);
  });

  it("reads the libraries out of ldd's output, loader included", () => {
    const out = [
      "\tlinux-vdso.so.1 (0x00007ffd)",
      "\tlibssl.so.3 => /lib/x86_64-linux-gnu/libssl.so.3 (0x00007f78)",
      "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f78)",
      "\t/lib64/ld-linux-x86-64.so.2 (0x00007f78)",
      "\tlibmissing.so => not found",
    ].join("\n");
    assert.deepEqual(parseLdd(out), [
      "/lib/x86_64-linux-gnu/libc.so.6",
      "/lib/x86_64-linux-gnu/libssl.so.3",
      "/lib64/ld-linux-x86-64.so.2",
    ]);
  });
});

describe("debianPostgres: the PostgreSQL of this Debian release, not a hard-coded major", () => {
  it("picks the newest installed server major and names its package and share directory", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-pg-"));
    try {
      for (const major of ["9", "15", "17"]) {
        fs.mkdirSync(path.join(root, major, "bin"), { recursive: true });
        fs.writeFileSync(path.join(root, major, "bin", "postgres"), "");
      }
      fs.mkdirSync(path.join(root, "18", "bin"), { recursive: true }); // a client only: no server
      assert.deepEqual(debianPostgres(root), {
        major: "17",
        dir: path.join(root, "17"),
        bin: path.join(root, "17", "bin"),
        share: "/usr/share/postgresql/17",
        pkg: "postgresql-17",
      });
      fs.rmSync(path.join(root, "9"), { recursive: true });
      fs.rmSync(path.join(root, "15"), { recursive: true });
      fs.rmSync(path.join(root, "17"), { recursive: true });
      assert.throws(
        () => debianPostgres(root),
        /no PostgreSQL server under .*: run `bash host\/scripts\/setup\.sh`/,
      );
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it("finds this machine's server where setup installed it", () => {
    const pg = debianPostgres();
    assert.ok(fs.existsSync(path.join(pg.bin, "postgres")), pg.bin);
    assert.match(
      execFileSync("dpkg-query", ["-W", "-f=${Status}", pg.pkg], { encoding: "utf8" }),
      /installed/,
    );
  });
});
