import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { normalizeEntries } from "./oci-layout";
import { REDIS_ENTRYPOINT, REDIS_PORT, REDIS_UID, redisSpec } from "./redis-image";

/**
 * The entrypoint run by this machine's dash with a stand-in `redis-server` on PATH that prints
 * its arguments and the config it reads on stdin: what the real server gets, without a server
 * (test/dataplane/data-service-images.test.ts runs the real one from the image).
 */
function runEntrypoint(env: Record<string, string>, ...args: string[]) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-redis-entry-"));
  try {
    fs.writeFileSync(path.join(dir, "entrypoint.sh"), REDIS_ENTRYPOINT, { mode: 0o755 });
    fs.writeFileSync(path.join(dir, "redis-server"), '#!/bin/sh\nprintf "args:%s\\n" "$*"\ncat\n', {
      mode: 0o755,
    });
    const r = spawnSync("/bin/dash", [path.join(dir, "entrypoint.sh"), ...args], {
      encoding: "utf8",
      env: { PATH: `${dir}:/usr/bin:/bin`, ...env },
    });
    return { status: r.status, out: r.stdout, err: r.stderr };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe("klutch.local/redis: Debian's Redis 7.0 for the keyvalue (Valkey) service type", () => {
  const spec = redisSpec("klutch.local/redis");

  it("holds the server, the tests' client and the entrypoint's shell and sed, runs as redis (999)", () => {
    const entries = new Map(normalizeEntries(spec.entries).map((e) => [e.path, e]));
    for (const p of ["/usr/bin/redis-server", "/usr/bin/redis-cli", "/bin/dash", "/bin/sed"])
      assert.equal(entries.get(p)?.type, "file", p);
    assert.deepEqual(entries.get("/bin/sh"), { type: "symlink", path: "/bin/sh", target: "dash" });
    // Debian's redis-server is a link to redis-check-rdb: the image has its content under the
    // server's name, which is what makes the binary run as the server.
    const server = entries.get("/usr/bin/redis-server");
    assert.ok(server?.type === "file" && server.source.endsWith("/redis-check-rdb"));
    assert.ok(
      [...entries.keys()].some((p) => /\/libssl\.so\.3$/.test(p)),
      "its libraries",
    );
    const passwd = entries.get("/etc/passwd");
    assert.match(passwd?.type === "content" ? String(passwd.content) : "", /^redis:x:999:999:/m);
    assert.deepEqual(spec.config.Entrypoint, ["/usr/local/bin/docker-entrypoint.sh"]);
    assert.equal(spec.config.User, `${REDIS_UID}:${REDIS_UID}`);
    assert.match(spec.version, /^7\.0\.\d+-/, "Debian 12's Redis 7.0");
  });

  it("gives the server its password on stdin, quoted, with every address and protected mode off", () => {
    const r = runEntrypoint({ REDIS_PASSWORD: 'se"cr\\et $x' }, "--appendonly", "yes");
    assert.equal(r.status, 0, r.err);
    assert.equal(
      r.out,
      [
        "args:- --appendonly yes",
        'requirepass "se\\"cr\\\\et $x"',
        "bind * -::*",
        `port ${REDIS_PORT}`,
        "protected-mode no",
        "dir /data",
        "",
      ].join("\n"),
    );
  });

  it("refuses to start without a password, or with one of two lines", () => {
    const none = runEntrypoint({});
    assert.notEqual(none.status, 0);
    assert.match(none.err, /REDIS_PASSWORD must be set/);
    const twoLines = runEntrypoint({ REDIS_PASSWORD: "a\nb" });
    assert.notEqual(twoLines.status, 0);
    assert.match(twoLines.err, /REDIS_PASSWORD must be one line/);
  });
});
