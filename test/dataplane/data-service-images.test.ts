import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { MARIADB_PORT, mariadbSpec } from "../../host/local-clusters/images/mariadb-image";
import { buildImage, type ImageSpec } from "../../host/local-clusters/images/oci-layout";
import {
  ALERTMANAGER_COMMAND,
  ALERTMANAGER_PORT,
  PROMETHEUS_PORT,
  prometheusSpec,
} from "../../host/local-clusters/images/prometheus-image";
import {
  RABBITMQ_AMQP_PORT,
  RABBITMQ_MANAGEMENT_PORT,
  RABBITMQ_UID,
  rabbitmqSpec,
} from "../../host/local-clusters/images/rabbitmq-image";
import { REDIS_PORT, REDIS_UID, redisSpec } from "../../host/local-clusters/images/redis-image";
import { ImageSandbox, type SandboxResult } from "../helpers/image-sandbox";
import { settled } from "../helpers/settled";

/**
 * The data services' images (host/local-clusters/images: redis, mariadb, prometheus, rabbitmq) built as a
 * node gets them, unpacked, and their entrypoints run in namespaces of their own
 * (test/helpers/image-sandbox.ts), each answered by the client the image carries for the tests
 * in app-cluster pods: redis-cli, mariadb, promtool and amtool, amqp-tools and curl. Every server listens only inside
 * its sandbox's network namespace. Prints each archive's size and build time.
 */
describe("the data services' images serve their clients from their own root file systems (data plane)", function () {
  this.timeout(5 * 60_000);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-ds-images-"));
  const sandboxes: ImageSandbox[] = [];

  before(function () {
    if (process.getuid?.() !== 0) this.skip(); // namespaces, mounts and uids need root
  });
  after(async () => {
    for (const s of sandboxes) await s.stop("SIGKILL");
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  async function sandbox(name: string, spec: ImageSpec): Promise<ImageSandbox> {
    const started = Date.now();
    const image = await buildImage(spec, path.join(tmp, "cache"));
    const seconds = (Date.now() - started) / 1000;
    const bytes = fs.statSync(image.archive).size;
    process.stdout.write(
      `      ${image.reference}: ${bytes} bytes (${(bytes / 2 ** 20).toFixed(1)} MiB), built in ${seconds.toFixed(1)} s\n`,
    );
    const s = ImageSandbox.unpack(image, spec, path.join(tmp, name));
    sandboxes.push(s);
    return s;
  }
  const until = (run: () => Promise<SandboxResult>, ok: (r: SandboxResult) => boolean, seconds = 30) =>
    settled(run, ok, seconds * 4, 250);

  describe("klutch.local/redis", () => {
    const password = `pw "with" \\ quotes 'n $dollar`;
    let redis: ImageSandbox;
    const cli = (args: string[], auth?: string) =>
      redis.exec(
        ["redis-cli", "-h", "127.0.0.1", "-p", String(REDIS_PORT), ...args],
        auth === undefined ? {} : { REDISCLI_AUTH: auth },
      );

    before(async () => {
      redis = await sandbox("redis", redisSpec("klutch.local/redis"));
      await redis.start({ REDIS_PASSWORD: password });
    });

    it("answers redis-cli with REDIS_PASSWORD only: PING, SET and GET", async () => {
      const ping = await until(
        () => cli(["PING"], password),
        (r) => r.out.trim() === "PONG",
      );
      assert.equal(ping.out.trim(), "PONG", `${ping.err}\n${redis.log()}`);
      assert.match((await cli(["PING"])).out, /NOAUTH Authentication required/);
      const wrong = await cli(["PING"], "wrong");
      assert.match(wrong.err, /AUTH failed: WRONGPASS/);
      assert.match(wrong.out, /NOAUTH Authentication required/);
      assert.equal((await cli(["SET", "smoke", "value 1"], password)).out.trim(), "OK");
      assert.equal((await cli(["GET", "smoke"], password)).out.trim(), "value 1");
      const config = await cli(["CONFIG", "GET", "protected-mode"], password);
      assert.deepEqual(config.out.trim().split("\n"), ["protected-mode", "no"]);
      if (fs.existsSync("/proc/net/if_inet6")) {
        const v6 = await redis.exec(["redis-cli", "-h", "::1", "-p", String(REDIS_PORT), "PING"], {
          REDISCLI_AUTH: password,
        });
        assert.equal(v6.out.trim(), "PONG", "every IPv6 address too");
      }
    });

    it("runs as uid 999 in a network namespace of its own, and stops on SIGTERM saving its data", async () => {
      const status = fs.readFileSync(`/proc/${redis.pid}/status`, "utf8");
      assert.match(status, new RegExp(`^Uid:\\s+${REDIS_UID}\\s+${REDIS_UID}\\s`, "m"));
      assert.match(status, /^Groups:\s*$/m, "no supplementary groups");
      assert.notEqual(fs.readlinkSync(`/proc/${redis.pid}/ns/net`), fs.readlinkSync("/proc/self/ns/net"));
      assert.equal(await redis.stop(), 0, redis.log());
      assert.match(redis.log(), /DB saved on disk/);
      assert.ok(fs.existsSync(path.join(redis.root, "data", "dump.rdb")));
    });
  });

  describe("klutch.local/mariadb", () => {
    const password = `it's a \\ "pw"`;
    let mariadb: ImageSandbox;
    // Over TCP to 127.0.0.1 (a client in another pod's way), or on the socket. Not to `localhost`:
    // the sandbox has no /etc/hosts (a pod's is the kubelet's), so the name would go to DNS.
    const tcp = ["--protocol=TCP", "-h", "127.0.0.1", "-P", String(MARIADB_PORT)];
    const sql = (query: string, pw = password, via = tcp) =>
      mariadb.exec(["mariadb", ...via, "-uroot", "-N", "-B", "-e", query], { MYSQL_PWD: pw });

    before(async () => {
      mariadb = await sandbox("mariadb", mariadbSpec("klutch.local/mariadb"));
      await mariadb.start({ MARIADB_ROOT_PASSWORD: password });
    });

    it("installs its data directory on the first start and answers root with MARIADB_ROOT_PASSWORD over TCP", async () => {
      const one = await until(
        () => sql("SELECT 1"),
        (r) => r.out.trim() === "1",
        90,
      );
      assert.equal(one.out.trim(), "1", `${one.err}\n${mariadb.log()}`);
      const denied = await sql("SELECT 1", "wrong");
      assert.notEqual(denied.code, 0);
      assert.match(denied.err, /Access denied for user 'root'@'127\.0\.0\.1'/);
      const users = await sql("SELECT CONCAT(User, '@', Host) FROM mysql.global_priv ORDER BY 1");
      assert.deepEqual(users.out.trim().split("\n"), ["mariadb.sys@localhost", "root@%", "root@localhost"]);
      // The socket, as root@localhost, with the same password.
      const local = await sql("SELECT CURRENT_USER()", password, ["--protocol=SOCKET"]);
      assert.equal(local.out.trim(), "root@localhost", local.err);
      const write = await sql(
        "CREATE DATABASE smoke; CREATE TABLE smoke.t (v VARCHAR(20)); INSERT INTO smoke.t VALUES ('kept'); SELECT @@version, @@character_set_server",
      );
      assert.match(write.out, /^10\.11\.\d+-MariaDB\S*\tutf8mb4$/m, write.err);
    });

    it("starts again on its data without the password variable, the data and password kept", async () => {
      assert.equal(await mariadb.stop(), 0, mariadb.log());
      assert.match(mariadb.log(), /Shutdown complete/);
      await mariadb.start({});
      const kept = await until(
        () => sql("SELECT v FROM smoke.t"),
        (r) => r.code === 0,
        60,
      );
      assert.equal(kept.out.trim(), "kept", `${kept.err}\n${mariadb.log()}`);
      assert.notEqual((await sql("SELECT 1", "")).code, 0, "still only with the password");
    });
  });

  describe("klutch.local/prometheus", () => {
    let prometheus: ImageSandbox;
    const promtool = (query: string) =>
      prometheus.exec(["promtool", "query", "instant", `http://127.0.0.1:${PROMETHEUS_PORT}`, query]);
    const amtool = (...args: string[]) =>
      prometheus.exec(["amtool", `--alertmanager.url=http://127.0.0.1:${ALERTMANAGER_PORT}`, ...args]);

    before(async () => {
      prometheus = await sandbox("prometheus", prometheusSpec("klutch.local/prometheus"));
      await prometheus.start();
      // The pod's second container: the same image, Alertmanager's command.
      prometheus.spawnBeside(ALERTMANAGER_COMMAND);
    });

    it("scrapes itself, as promtool query instant reads back", async () => {
      const up = await until(
        () => promtool("up"),
        (r) => / => 1 @/.test(r.out),
        60,
      );
      assert.match(
        up.out,
        /^up\{instance="127\.0\.0\.1:\d+", job="prometheus"\} => 1 @/m,
        `${up.err}\n${prometheus.log()}`,
      );
    });

    it("runs Alertmanager beside it from the same image: amtool reads its config and an alert it adds, Prometheus finds it", async () => {
      const config = await until(
        () => amtool("config", "show"),
        (r) => r.code === 0,
      );
      assert.match(config.out, /receiver: "null"/, `${config.err}\n${prometheus.log()}`);
      assert.match((await amtool("cluster", "show")).out, /Cluster Status:\s+disabled/);
      assert.equal((await amtool("alert", "add", "SmokeTest", "severity=none")).code, 0);
      assert.match((await amtool("alert", "query")).out, /SmokeTest/);
      const found = await until(
        () => promtool("prometheus_notifications_alertmanagers_discovered"),
        (r) => / => 1 @/.test(r.out),
      );
      assert.match(found.out, / => 1 @/);
      assert.equal(await prometheus.stop(), 0, prometheus.log());
    });
  });
  describe("klutch.local/rabbitmq", () => {
    const user = "admin";
    const password = `pw "with" \\ quotes`;
    let rabbitmq: ImageSandbox;
    const url = (pw: string) => `amqp://${user}:${encodeURIComponent(pw)}@127.0.0.1:${RABBITMQ_AMQP_PORT}`;
    const amqp = (tool: string, args: string[], pw = password) =>
      rabbitmq.exec([`amqp-${tool}`, "-u", url(pw), ...args]);
    const api = (auth: string[]) =>
      rabbitmq.exec([
        "curl",
        "-sS",
        "-w",
        "\\n%{http_code}",
        ...auth,
        `http://127.0.0.1:${RABBITMQ_MANAGEMENT_PORT}/api/overview`,
      ]);
    let started = 0;

    before(async () => {
      rabbitmq = await sandbox("rabbitmq", rabbitmqSpec("klutch.local/rabbitmq"));
      started = Date.now();
      await rabbitmq.start({ RABBITMQ_DEFAULT_USER: user, RABBITMQ_DEFAULT_PASS: password });
    });

    it("accepts AMQP with RABBITMQ_DEFAULT_USER and _PASS only: a queue declared, a message published and got back", async () => {
      const declared = await until(
        () => amqp("declare-queue", ["-q", "smoke", "-d"]),
        (r) => r.code === 0,
        90,
      );
      assert.equal(declared.out.trim(), "smoke", `${declared.err}\n${rabbitmq.log()}`);
      const beam = fs
        .readdirSync("/proc")
        .filter((p) => /^\d+$/.test(p))
        .find((p) => {
          try {
            return (
              fs.readFileSync(`/proc/${p}/comm`, "utf8").trim() === "beam.smp" &&
              fs.readlinkSync(`/proc/${p}/root`) === rabbitmq.root
            );
          } catch {
            return false;
          }
        });
      const rss = beam
        ? /^VmRSS:\s+(.*)$/m.exec(fs.readFileSync(`/proc/${beam}/status`, "utf8"))?.[1]
        : undefined;
      process.stdout.write(
        `      AMQP accepted ${((Date.now() - started) / 1000).toFixed(1)} s after the start; beam.smp VmRSS ${rss}\n`,
      );
      const published = await amqp("publish", ["-r", "smoke", "-b", "hello rabbit"]);
      assert.equal(published.code, 0, published.err);
      const got = await amqp("get", ["-q", "smoke"]);
      assert.equal(got.out, "hello rabbit", got.err);
      const wrong = await amqp("get", ["-q", "smoke"], "wrong");
      assert.notEqual(wrong.code, 0);
      assert.match(wrong.err, /ACCESS_REFUSED|Login was refused|socket closed|a socket error occurred/i);
    });

    it("answers the management API with the credentials only, runs as uid 999 with a 0400 cookie, and stops on SIGTERM", async () => {
      const overview = await api(["-u", `${user}:${password}`]);
      const lines = overview.out.trimEnd().split("\n");
      assert.equal(lines.pop(), "200", `${overview.err}\n${overview.out}`);
      assert.match(lines.join("\n"), /"rabbitmq_version"/, overview.out);
      const body = JSON.parse(lines.join("\n")) as { rabbitmq_version?: string; node?: string };
      assert.match(body.rabbitmq_version ?? "", /^3\.10\./);
      assert.equal(body.node, "rabbit@localhost");
      assert.equal((await api([])).out.trimEnd().split("\n").pop(), "401");
      assert.equal((await api(["-u", `${user}:wrong`])).out.trimEnd().split("\n").pop(), "401");
      const status = fs.readFileSync(`/proc/${rabbitmq.pid}/status`, "utf8");
      assert.match(status, new RegExp(`^Uid:\\s+${RABBITMQ_UID}\\s+${RABBITMQ_UID}\\s`, "m"));
      const cookie = fs.statSync(path.join(rabbitmq.root, "var/lib/rabbitmq/.erlang.cookie"));
      assert.equal(cookie.mode & 0o777, 0o400);
      assert.equal(cookie.uid, RABBITMQ_UID);
      assert.equal(await rabbitmq.stop(), 0, rabbitmq.log());
      assert.match(rabbitmq.log(), /SIGTERM received - shutting down/);
    });
  });
});
