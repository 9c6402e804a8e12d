import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { MARIADB_ENTRYPOINT, MARIADB_PORT, MARIADB_SOCKET, MARIADB_UID, mariadbSpec } from "./mariadb-image";
import { normalizeEntries } from "./oci-layout";

/**
 * The entrypoint run by this machine's dash with stand-ins for `mariadb-install-db` (it keeps the
 * SQL file it is given and makes the data directory's `mysql`) and `mariadbd` (it prints its
 * arguments). test/dataplane/data-service-images.test.ts runs the real ones from the image.
 */
class Stand {
  readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-mariadb-entry-"));
  readonly datadir = path.join(this.dir, "data");

  constructor() {
    fs.writeFileSync(path.join(this.dir, "entrypoint.sh"), MARIADB_ENTRYPOINT, { mode: 0o755 });
    const install = [
      "#!/bin/sh",
      'printf "%s\\n" "$*" > "$STAND/install-args"',
      'for a; do case "$a" in --extra-file=*) cp "${a#--extra-file=}" "$STAND/extra.sql" ;; esac; done',
      '[ -z "$STAND_FAIL" ] || exit 3',
      'mkdir -p "$MARIADB_DATADIR/mysql"',
    ];
    fs.writeFileSync(path.join(this.dir, "mariadb-install-db"), `${install.join("\n")}\n`, { mode: 0o755 });
    fs.writeFileSync(path.join(this.dir, "mariadbd"), '#!/bin/sh\nprintf "mariadbd %s\\n" "$*"\n', {
      mode: 0o755,
    });
  }

  run(env: Record<string, string>, ...args: string[]) {
    const r = spawnSync("/bin/dash", [path.join(this.dir, "entrypoint.sh"), ...args], {
      encoding: "utf8",
      env: {
        PATH: `${this.dir}:/usr/bin:/bin`,
        STAND: this.dir,
        MARIADB_DATADIR: this.datadir,
        TMPDIR: this.dir,
        ...env,
      },
    });
    return { status: r.status, out: r.stdout, err: r.stderr };
  }

  read(file: string): string {
    return fs.readFileSync(path.join(this.dir, file), "utf8");
  }

  remove(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

describe("klutch.local/mariadb: Debian's MariaDB 10.11 with its client", () => {
  const spec = mariadbSpec("klutch.local/mariadb");

  it("holds the server, the install script and what it runs, the client, the share files, runs as mysql (999)", () => {
    const paths = new Set(normalizeEntries(spec.entries).map((e) => e.path));
    const needed = [
      "/usr/sbin/mariadbd",
      "/usr/bin/mariadb-install-db",
      "/usr/bin/my_print_defaults",
      "/usr/bin/mariadb",
      ...["sh", "dash", "sed", "dirname", "uname", "mkdir", "chmod", "cat"].map((p) => `/bin/${p}`),
      "/usr/share/mysql/english/errmsg.sys",
      "/usr/share/mysql/charsets/Index.xml",
      // Every file mariadb-install-db checks for before it starts.
      ...["fill_help_tables", "mysql_system_tables", "mysql_performance_tables", "mysql_system_tables_data"]
        .concat(["maria_add_gis_sp_bootstrap", "mysql_test_db", "mysql_sys_schema"])
        .map((f) => `/usr/share/mysql/${f}.sql`),
    ];
    for (const p of needed) assert.ok(paths.has(p), p);
    for (const p of ["/usr/share/mysql/errmsg-utf8.txt", "/usr/share/mysql/wsrep_notify"])
      assert.ok(!paths.has(p), `${p} is left out`);
    assert.ok(
      [...paths].some((p) => /\/libaio\.so\.1$/.test(p)),
      "the server's libraries",
    );
    assert.equal(spec.config.User, `${MARIADB_UID}:${MARIADB_UID}`);
    assert.match(spec.version, /^10\.11\.\d+-/, "Debian 12's MariaDB 10.11");
  });

  it("on a first start installs the data directory with the root password, escaped, then runs the server", () => {
    const stand = new Stand();
    try {
      const r = stand.run({ MARIADB_ROOT_PASSWORD: "it's a \\ pw" }, "--max-connections=50");
      assert.equal(r.status, 0, r.err);
      assert.equal(
        stand.read("install-args").trim(),
        `--datadir=${stand.datadir} --auth-root-authentication-method=normal --skip-test-db --force --extra-file=${stand.dir}/init.sql`,
      );
      const sql = stand.read("extra.sql");
      assert.match(sql, /^ALTER USER 'root'@'localhost' IDENTIFIED BY 'it\\'s a \\\\ pw';$/m);
      assert.match(sql, /^CREATE USER 'root'@'%' IDENTIFIED BY 'it\\'s a \\\\ pw';$/m);
      assert.match(sql, /^GRANT ALL PRIVILEGES ON \*\.\* TO 'root'@'%' WITH GRANT OPTION;$/m);
      assert.equal(stand.read("init.sql"), "", "the password is not left behind");
      assert.equal(
        r.out.trim(),
        `mariadbd --datadir=${stand.datadir} --bind-address=* --port=${MARIADB_PORT} --socket=${MARIADB_SOCKET} ` +
          "--skip-name-resolve --character-set-server=utf8mb4 --collation-server=utf8mb4_general_ci --max-connections=50",
      );

      // Started again on its data: no install, no password needed.
      fs.rmSync(path.join(stand.dir, "install-args"));
      const again = stand.run({});
      assert.equal(again.status, 0, again.err);
      assert.ok(!fs.existsSync(path.join(stand.dir, "install-args")));
      assert.match(again.out, /^mariadbd --datadir=/);
    } finally {
      stand.remove();
    }
  });

  it("leaves no password behind when the install fails, and stops with its status", () => {
    const stand = new Stand();
    try {
      const r = stand.run({ MARIADB_ROOT_PASSWORD: "pw", STAND_FAIL: "1" });
      assert.equal(r.status, 3);
      assert.match(stand.read("extra.sql"), /IDENTIFIED BY 'pw'/);
      assert.equal(stand.read("init.sql"), "");
      assert.equal(r.out, "", "no server");
    } finally {
      stand.remove();
    }
  });

  it("refuses a first start without MARIADB_ROOT_PASSWORD", () => {
    const stand = new Stand();
    try {
      const r = stand.run({});
      assert.notEqual(r.status, 0);
      assert.match(r.err, /MARIADB_ROOT_PASSWORD must be set/);
      assert.equal(r.out, "");
    } finally {
      stand.remove();
    }
  });
});
