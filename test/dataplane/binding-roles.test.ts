import { strict as assert } from "node:assert";
import { spawn, spawnSync } from "node:child_process";
import { REVOKE_SCRIPT, roleName } from "../../programs/composition-function/binding-roles";
import { ROLE_SCRIPT } from "../../programs/composition-function/local-binding";
import { kubeletExpand } from "../helpers/kubelet-expansion";
import { Postgres, waitFor } from "../helpers/pg-haproxy";

/**
 * The local data-service backend's role scripts against a real PostgreSQL 15 (Debian's, as in
 * the node image), with password authentication over TCP as in the instance's pod: the role pod
 * a binding composes, and the revocation pod its instance composes once the binding is gone.
 * The scripts run as their pods run them: `/bin/sh -c` with the pods' environment, after the
 * kubelet's expansion of the command.
 */
describe("local data-service backend: a binding's role, revoked for real", function () {
  this.timeout(120_000);
  let pg: Postgres;
  const [A, B] = [roleName("binding-a"), roleName("binding-b")] as [string, string];

  before(async () => {
    pg = await Postgres.start({
      // The superuser over the socket, as the pods' admin; everyone over TCP with a password.
      hba: ["local all postgres trust", "host all all 127.0.0.1/32 scram-sha-256"],
    });
  });
  after(async () => pg?.destroy());

  /** A pod's script as its container runs it: sh -c, the admin's connection in the environment. */
  const job = (script: string, vars: Record<string, string>) => {
    const env = {
      PATH: process.env.PATH!,
      PGHOST: pg.dir,
      PGPORT: String(pg.port),
      PGUSER: "postgres",
      PGDATABASE: "postgres",
      ...vars,
    };
    const r = spawnSync("/bin/sh", ["-c", kubeletExpand(script, env)], {
      encoding: "utf8",
      timeout: 30_000,
      env,
    });
    return { code: r.status, out: `${r.stdout}${r.stderr}` };
  };
  const admin = (sql: string) => job(`psql --no-psqlrc -tA -v ON_ERROR_STOP=1 -c "$SQL"`, { SQL: sql });
  /** A binding's app: TCP to 127.0.0.1 with its role and password, as the credentials say. */
  const login = (role: string, password: string, sql = "select current_user") =>
    spawnSync("psql", ["-h", "127.0.0.1", "-p", String(pg.port), "-U", role, "-d", "postgres", "-tAc", sql], {
      encoding: "utf8",
      timeout: 15_000,
      env: { PATH: process.env.PATH, PGPASSWORD: password, PGSSLMODE: "disable", PGCONNECT_TIMEOUT: "5" },
    });

  it("the role pod makes a login role that the binding's password opens, and running it again changes nothing", () => {
    for (const [role, password] of [
      [A, "password-of-a"],
      [B, "password-of-b"],
    ] as const) {
      const r = job(ROLE_SCRIPT, { ROLE_NAME: role, ROLE_PASSWORD: password });
      assert.equal(r.code, 0, r.out);
    }
    assert.equal(job(ROLE_SCRIPT, { ROLE_NAME: A, ROLE_PASSWORD: "password-of-a" }).code, 0);
    const a = login(A, "password-of-a");
    assert.equal(a.status, 0, a.stderr);
    assert.equal(a.stdout.trim(), A);
    assert.notEqual(login(A, "password-of-b").status, 0, "another binding's password does not open it");
    // What an app does with its database: objects it owns, which the revocation must hand over.
    const made = login(A, "password-of-a", "create table orders (id int); insert into orders values (1)");
    assert.equal(made.status, 0, made.stderr);
  });

  it("the revocation pod ends the role's sessions, hands over what it owns and drops it; other bindings keep theirs", async () => {
    // A session of the app that is open while its binding is deleted.
    const session = spawn(
      "psql",
      ["-h", "127.0.0.1", "-p", String(pg.port), "-U", A, "-d", "postgres", "-tAc", "select pg_sleep(60)"],
      { env: { PATH: process.env.PATH, PGPASSWORD: "password-of-a", PGSSLMODE: "disable" }, stdio: "pipe" },
    );
    let ended: number | null | undefined;
    session.on("exit", (code) => (ended = code));
    await waitFor(
      "the app's session to be open",
      15_000,
      () =>
        admin(
          `select count(*) from pg_stat_activity where usename = '${A}' and query like '%pg_sleep%'`,
        ).out.trim() === "1",
    );

    const r = job(REVOKE_SCRIPT, { ROLES: A });
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, new RegExp(`dropped role ${A}`));

    await waitFor("the app's session to be ended", 15_000, () => ended !== undefined);
    assert.notEqual(ended, 0, "its session was terminated, not left to finish");
    const refused = login(A, "password-of-a");
    assert.notEqual(refused.status, 0, "a deleted binding's password no longer logs in");
    assert.match(refused.stderr, /password authentication failed/);
    assert.equal(admin(`select count(*) from pg_roles where rolname = '${A}'`).out.trim(), "0");
    // Its table is kept, now the superuser's: data is the instance's, not the binding's.
    assert.equal(admin("select tableowner from pg_tables where tablename = 'orders'").out.trim(), "postgres");

    const b = login(B, "password-of-b");
    assert.equal(b.status, 0, b.stderr);

    // Run again, as a restarted pod would: the role is gone, nothing to do, still a success.
    assert.equal(job(REVOKE_SCRIPT, { ROLES: A }).code, 0);
  });

  it("refuses to drop any role that is not a binding role, and drops none of the list then", () => {
    for (const roles of ["postgres", `${B} postgres`, `klutch_x'; drop role ${B}; --`]) {
      const r = job(REVOKE_SCRIPT, { ROLES: roles });
      assert.notEqual(r.code, 0, `ROLES=${roles}: ${r.out}`);
      assert.match(r.out, /refusing to drop .*: not a binding role/);
    }
    assert.equal(
      admin(`select count(*) from pg_roles where rolname in ('postgres', '${B}')`).out.trim(),
      "2",
    );
    assert.equal(login(B, "password-of-b").status, 0);
  });
});
