import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { normalizeEntries } from "./oci-layout";
import {
  RABBITMQ_AMQP_PORT,
  RABBITMQ_CONFIG,
  RABBITMQ_ENTRYPOINT,
  RABBITMQ_MANAGEMENT_PORT,
  RABBITMQ_NODENAME,
  RABBITMQ_UID,
  rabbitmqSpec,
} from "./rabbitmq-image";

/**
 * The entrypoint run by this machine's dash with a stand-in `rabbitmq-server` on PATH that prints
 * its arguments, the advanced config it is given and whether the password is still in its
 * environment (test/dataplane/data-service-images.test.ts runs the real broker from the image).
 */
function runEntrypoint(env: Record<string, string>, initialized = false) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-rabbitmq-entry-"));
  try {
    fs.writeFileSync(path.join(dir, "entrypoint.sh"), RABBITMQ_ENTRYPOINT, { mode: 0o755 });
    fs.writeFileSync(
      path.join(dir, "rabbitmq-server"),
      '#!/bin/sh\nprintf "args:%s\\n" "$*"\ncat "$RABBITMQ_ADVANCED_CONFIG_FILE"\necho "pass:${RABBITMQ_DEFAULT_PASS-unset}"\n',
      { mode: 0o755 },
    );
    if (initialized) fs.mkdirSync(path.join(dir, "mnesia", RABBITMQ_NODENAME), { recursive: true });
    const config = path.join(dir, "advanced.config");
    const r = spawnSync("/bin/dash", [path.join(dir, "entrypoint.sh"), "-extra", "x"], {
      encoding: "utf8",
      env: {
        PATH: `${dir}:/usr/bin:/bin`,
        RABBITMQ_MNESIA_BASE: path.join(dir, "mnesia"),
        RABBITMQ_NODENAME,
        RABBITMQ_ADVANCED_CONFIG_FILE: config,
        ...env,
      },
    });
    const mode = fs.existsSync(config) ? fs.statSync(config).mode & 0o777 : undefined;
    return { status: r.status, out: r.stdout, err: r.stderr, mode };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe("klutch.local/rabbitmq: Debian's RabbitMQ 3.10 for the messaging service type", () => {
  const spec = rabbitmqSpec("klutch.local/rabbitmq");
  const entries = new Map(normalizeEntries(spec.entries).map((e) => [e.path, e]));
  const content = (p: string) => {
    const e = entries.get(p);
    return e?.type === "content" ? String(e.content) : "";
  };

  it("holds Erlang with epmd, RabbitMQ with the management plugin enabled, the tests' clients, runs as rabbitmq (999)", () => {
    const erts = [...entries.keys()].find((p) => /^\/usr\/lib\/erlang\/erts-[^/]+\/bin\/beam\.smp$/.test(p));
    assert.ok(erts, "the VM");
    assert.equal(entries.get(erts.replace(/beam\.smp$/, "epmd"))?.type, "file", "epmd");
    for (const p of [
      "/usr/bin/amqp-publish",
      "/usr/bin/amqp-get",
      "/usr/bin/amqp-declare-queue",
      "/usr/bin/curl",
    ])
      assert.equal(entries.get(p)?.type, "file", p);
    assert.ok(
      [...entries.keys()].some((p) => /\/plugins\/rabbitmq_management-[^/]+\/ebin\//.test(p)),
      "the management plugin",
    );
    assert.ok(
      [...entries.keys()].some((p) => /\/lib\/crypto-[^/]+\/priv\/lib\/crypto\.so$/.test(p)) &&
        [...entries.keys()].some((p) => /\/libcrypto\.so\.3$/.test(p)),
      "crypto's NIF with its library",
    );
    assert.ok(
      ![...entries.keys()].some((p) =>
        /\/lib\/erlang\/lib\/(snmp|erl_interface)-|\/src\/[^/]+\.erl$/.test(p),
      ),
      "no snmp, erl_interface or sources",
    );
    // The CLI's seven escripts are one file: six are symlinks to the first.
    const escripts = [...entries.values()].filter((e) => /\/escript\/rabbitmq/.test(e.path));
    assert.equal(escripts.filter((e) => e.type === "file").length, 1, "one escript's bytes");
    assert.equal(content("/etc/rabbitmq/enabled_plugins"), "[rabbitmq_management].\n");
    assert.equal(content("/etc/rabbitmq/rabbitmq.conf"), RABBITMQ_CONFIG);
    assert.match(RABBITMQ_CONFIG, new RegExp(`^listeners\\.tcp\\.default = ${RABBITMQ_AMQP_PORT}$`, "m"));
    assert.match(RABBITMQ_CONFIG, new RegExp(`^management\\.tcp\\.port = ${RABBITMQ_MANAGEMENT_PORT}$`, "m"));
    assert.match(content("/etc/passwd"), /^rabbitmq:x:999:999::\/var\/lib\/rabbitmq:/m);
    assert.match(content("/etc/hosts"), /^127\.0\.0\.1\tlocalhost$/m);
    assert.equal(spec.config.User, `${RABBITMQ_UID}:${RABBITMQ_UID}`);
    assert.ok(spec.config.Env?.includes(`RABBITMQ_NODENAME=${RABBITMQ_NODENAME}`));
    assert.ok(!spec.config.Env?.some((e) => e.startsWith("RABBITMQ_USE_LONGNAME=")));
    assert.match(spec.version, /^3\.10\.\d+-/, "Debian 12's RabbitMQ 3.10");
  });

  it("gives the first start's user and password in an advanced.config of mode 0600, escaped, and not to the broker's environment", () => {
    const r = runEntrypoint({ RABBITMQ_DEFAULT_USER: "admin", RABBITMQ_DEFAULT_PASS: 'p"w\\ $x ü' });
    assert.equal(r.status, 0, r.err);
    assert.equal(
      r.out,
      [
        "args:-extra x",
        '[{rabbit, [{default_user, <<"admin"/utf8>>}, {default_pass, <<"p\\"w\\\\ $x ü"/utf8>>}]}].',
        "pass:unset",
        "",
      ].join("\n"),
    );
    assert.equal(r.mode, 0o600);
  });

  it("needs both variables on a new database, neither on one that exists", () => {
    const none = runEntrypoint({ RABBITMQ_DEFAULT_USER: "admin" });
    assert.notEqual(none.status, 0);
    assert.match(none.err, /RABBITMQ_DEFAULT_PASS must be set/);
    const again = runEntrypoint({}, true);
    assert.equal(again.status, 0, again.err);
    assert.equal(again.out, "args:-extra x\n[].\npass:unset\n");
  });
});
