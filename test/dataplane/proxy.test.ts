import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import * as tls from "node:tls";
import { consumerEndpoints } from "../../network/proxy/model/haproxy-config";
import { ConsumerEndpoint, PortRange, ProxyConnection } from "../../network/proxy/model/types";
import { PsqlSession } from "../helpers/psql-session";
import { connectivityProbeProvider as probe } from "../../network/shared/connectivity-probe";
import {
  Haproxy,
  Postgres,
  freePort,
  freePortRange,
  haproxyStats,
  pgbenchTps,
  renderLocal,
  run,
  waitFor,
} from "../helpers/pg-haproxy";
import { portsFor } from "../helpers/ports";

/** This file's own host ports (test/helpers/ports.ts). */
const hostPorts = portsFor(__filename);

/**
 * The default network path for real: PostgreSQL 15 and HAProxy 2.6 from Debian, HAProxy
 * configured by our planner and renderer, traffic on 127.0.0.1 only. Every process is
 * started and stopped here.
 */

const PG = [{ InstanceType: "PostgreSQL" }];

/** A plain TCP server standing in for a TLS instance: it records that a connection arrived. */
async function recorder(): Promise<net.Server & { port: number; hits: number }> {
  const server = Object.assign(net.createServer(), { port: 0, hits: 0 });
  server.on("connection", (s) => {
    // Health checks connect and close at once; a client sends its ClientHello.
    s.once("data", () => {
      server.hits++;
      s.destroy();
    });
    s.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  server.port = (server.address() as net.AddressInfo).port;
  return server;
}

/** Opens TLS with a server name and resolves once the proxy has passed or dropped it. */
function tlsAttempt(port: number, servername: string): Promise<void> {
  return new Promise((resolve) => {
    const s = tls.connect({ host: "127.0.0.1", port, servername, rejectUnauthorized: false });
    s.on("error", () => resolve());
    s.on("close", () => resolve());
    setTimeout(() => {
      s.destroy();
      resolve();
    }, 3000);
  });
}

/** Time until the proxy closes (or refuses) a fresh TCP connection that sends nothing. */
function msUntilClosed(port: number, limitMs = 5000): Promise<{ ms: number; how: string }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const s = net.connect(port, "127.0.0.1");
    const done = (how: string) => {
      s.destroy();
      resolve({ ms: Date.now() - started, how });
    };
    s.on("error", (e: NodeJS.ErrnoException) => done(e.code ?? "error"));
    s.on("close", () => done("closed"));
    s.on("data", () => done("data"));
    setTimeout(() => done("still open"), limitMs);
  });
}

describe("proxy data path: PostgreSQL 15 through HAProxy 2.6 (real processes, 127.0.0.1)", function () {
  this.timeout(60000);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-dataplane-"));
  let pg: Postgres;
  const proxies: Haproxy[] = [];
  const sessions: PsqlSession[] = [];
  let sniA: Awaited<ReturnType<typeof recorder>>;
  let sniB: Awaited<ReturnType<typeof recorder>>;
  let range: PortRange;
  let statsPort: number;
  let healthPort: number;
  let connections: ProxyConnection[];
  let assignments: Record<string, number>;
  let endpoints: Record<string, ConsumerEndpoint>;
  // Faster checks and a shorter ClientHello wait than production, to keep the run short.
  const options = () => ({
    statsPort,
    healthPort,
    pgsqlCheckUser: "postgres",
    check: { inter: "1s", fall: 2, rise: 1 },
    timeouts: { inspectDelay: "1s" },
  });
  const current = () => proxies[proxies.length - 1] as Haproxy;

  before(async () => {
    // One at a time, so `after` knows about everything that was started when something fails.
    sniA = await recorder();
    sniB = await recorder();
    pg = await Postgres.start();
    const init = await run("pgbench", ["-h", "127.0.0.1", "-p", String(pg.port), "-i", "-s", "1", "-q"], {
      timeoutMs: 60000,
    });
    assert.equal(init.code, 0, init.stderr);
    [statsPort, healthPort, range] = await Promise.all([
      freePort(),
      freePort(),
      freePortRange(10, hostPorts),
    ]);
    connections = [
      { id: "team-a/orders-db", instanceHost: "127.0.0.1", port: pg.port, enhancements: PG },
      { id: "team-b/reports-db", instanceHost: "127.0.0.1", port: pg.port, enhancements: PG },
      {
        id: "team-c/tls-a",
        instanceHost: "127.0.0.1",
        port: sniA.port,
        enhancements: [{ ConnectionType: "tlsSNI", serverName: "a.db.test" }],
      },
      {
        id: "team-c/tls-b",
        instanceHost: "127.0.0.1",
        port: sniB.port,
        enhancements: [{ ConnectionType: "tlsSNI", serverName: "b.db.test" }],
      },
    ];
    const rendered = renderLocal(connections, range, options());
    assignments = rendered.assignments;
    endpoints = consumerEndpoints(connections, assignments, "127.0.0.1");
    proxies.push(
      await Haproxy.start(rendered.config, work, [...Object.values(assignments), statsPort, healthPort]),
    );
    await waitFor("HAProxy to see every backend UP", 15000, async () => {
      const servers = (await haproxyStats(statsPort)).filter((r) => r.svname === "instance");
      return servers.length === 4 && servers.every((r) => r.status === "UP");
    });
  });

  after(async () => {
    for (const s of sessions) await s.close().catch(() => undefined);
    for (const p of proxies) await p.stop().catch(() => undefined);
    await pg?.destroy().catch(() => undefined);
    for (const s of [sniA, sniB]) s?.close();
    fs.rmSync(work, { recursive: true, force: true });
  });

  it("serves psql on every PostgreSQL connection's hostForConsumer:port", async () => {
    for (const id of ["team-a/orders-db", "team-b/reports-db"]) {
      const e = endpoints[id] as ConsumerEndpoint;
      assert.equal(e.hostForConsumer, "127.0.0.1");
      assert.notEqual(e.port, pg.port, "consumers use the proxy's port, not the instance's");
      const r = await run(
        "psql",
        [
          "-h",
          e.hostForConsumer,
          "-p",
          String(e.port),
          "-tAX",
          "-c",
          "select count(*) from pgbench_branches",
        ],
        { timeoutMs: 10000 },
      );
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout.trim(), "1");
    }
  });

  it("carries a short pgbench run through the proxy", async () => {
    const e = endpoints["team-a/orders-db"] as ConsumerEndpoint;
    const r = await run(
      "pgbench",
      ["-h", e.hostForConsumer, "-p", String(e.port), "-S", "-c", "2", "-j", "1", "-T", "3", "-n"],
      {
        timeoutMs: 20000,
      },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /number of failed transactions: 0/);
    assert.ok(pgbenchTps(r.stdout) > 0);
  });

  it("routes TLS clients by SNI on the one shared port, and drops non-TLS clients there", async () => {
    const port = (endpoints["team-c/tls-a"] as ConsumerEndpoint).port;
    assert.equal((endpoints["team-c/tls-b"] as ConsumerEndpoint).port, port);
    await tlsAttempt(port, "a.db.test");
    await tlsAttempt(port, "a.db.test");
    await tlsAttempt(port, "b.db.test");
    await tlsAttempt(port, "unknown.db.test");
    assert.deepEqual([sniA.hits, sniB.hits], [2, 1]);
    const plain = await msUntilClosed(port, 4000);
    assert.equal(plain.how, "closed", "a client that never sends a ClientHello is turned away");
    assert.ok(plain.ms >= 900, `turned away after the inspect delay, not before (${plain.ms} ms)`);
  });

  it("the ConnectivityProbe reports Ready=True through the proxy", async () => {
    const e = endpoints["team-a/orders-db"] as ConsumerEndpoint;
    const { outs } = await probe.create({
      host: e.hostForConsumer,
      port: e.port,
      timeoutMs: 2000,
      settleMs: 500,
      stats: { url: `http://127.0.0.1:${statsPort}/stats;csv`, backend: "bk_team-a_orders-db" },
    });
    assert.equal(outs!.ready, true, outs!.message);
    assert.equal(outs!.message, `TCP connection available at 127.0.0.1:${e.port}`);
  });

  it("soft reload removes one connection's route without dropping another connection's open session", async () => {
    const keep = endpoints["team-a/orders-db"] as ConsumerEndpoint;
    const removed = endpoints["team-b/reports-db"] as ConsumerEndpoint;
    const session = PsqlSession.onLoopback(keep.port);
    sessions.push(session);
    assert.equal(await session.query("select 'before reload';"), "before reload");
    const removedSession = PsqlSession.onLoopback(removed.port);
    sessions.push(removedSession);
    assert.equal(await removedSession.query("select 1;"), "1");

    const old = current();
    const next = renderLocal(
      connections.filter((c) => c.id !== "team-b/reports-db"),
      range,
      options(),
      assignments,
    );
    assert.equal(next.assignments["team-a/orders-db"], keep.port, "survivors keep their ports");
    assert.equal(next.assignments["team-b/reports-db"], undefined);
    proxies.push(
      await Haproxy.start(
        next.config,
        work,
        [...Object.values(next.assignments), statsPort, healthPort],
        old,
      ),
    );

    // The removed route is gone for new clients...
    const attempt = await msUntilClosed(removed.port, 2000);
    assert.equal(attempt.how, "ECONNREFUSED");
    // ...while the open session on the other connection lives on (the old process drains it).
    assert.equal(await session.query("select 'after reload';"), "after reload");
    assert.equal(old.running, true, "the old process stays until its sessions end");
    // New clients of the kept connection reach the new process.
    const fresh = await run(
      "psql",
      ["-h", "127.0.0.1", "-p", String(keep.port), "-tAX", "-c", "select 'new client'"],
      { timeoutMs: 10000 },
    );
    assert.equal(fresh.stdout.trim(), "new client", fresh.stderr);
    await session.close();
    await removedSession.close();
    assert.equal(await old.exit(10000), true, "the old process exits once its sessions are done");
  });

  it("with PostgreSQL stopped, clients are turned away promptly and the probe reports Ready=False", async () => {
    const e = endpoints["team-a/orders-db"] as ConsumerEndpoint;
    await pg.stop("fast");
    // Before the health check notices, HAProxy tries the instance and one retry.
    const early = await msUntilClosed(e.port);
    assert.equal(early.how, "closed");
    assert.ok(early.ms < 2000, `closed after ${early.ms} ms`);
    const psql = await run("psql", ["-h", "127.0.0.1", "-p", String(e.port), "-tAX", "-c", "select 1"], {
      timeoutMs: 10000,
    });
    assert.notEqual(psql.code, 0);
    assert.ok(psql.ms < 2000, `psql failed after ${psql.ms.toFixed(0)} ms`);

    // A bare TCP connect would succeed (HAProxy accepts); the probe sees the hang-up.
    const { outs } = await probe.create({
      host: e.hostForConsumer,
      port: e.port,
      timeoutMs: 2000,
      settleMs: 1500,
    });
    assert.equal(outs!.ready, false);
    assert.equal(outs!.reason, "BackendUnavailable");
    assert.match(outs!.message, /accepted the connection but closed it at once/);
    const viaBackend = await probe.create({
      host: e.hostForConsumer,
      port: e.port,
      timeoutMs: 2000,
      settleMs: 0,
      backend: { host: "127.0.0.1", port: pg.port },
    });
    assert.equal(viaBackend.outs!.reason, "BackendUnavailable");
    assert.match(viaBackend.outs!.message, /its backend 127\.0\.0\.1:\d+ does not: ConnectionRefused/);

    // Once the check marks it DOWN, HAProxy closes at once and its stats say why.
    await waitFor("HAProxy to mark the instance DOWN", 10000, async () =>
      (await haproxyStats(statsPort)).some((r) => r.pxname === "bk_team-a_orders-db" && r.status === "DOWN"),
    );
    const late = await msUntilClosed(e.port);
    assert.equal(late.how, "closed");
    assert.ok(late.ms < 500, `closed after ${late.ms} ms once DOWN`);
    const viaStats = await probe.create({
      host: e.hostForConsumer,
      port: e.port,
      timeoutMs: 2000,
      settleMs: 0,
      stats: { url: `http://127.0.0.1:${statsPort}/stats;csv`, backend: "bk_team-a_orders-db" },
    });
    assert.equal(viaStats.outs!.reason, "BackendUnavailable");
    assert.match(
      viaStats.outs!.message,
      /HAProxy reports no server UP in backend bk_team-a_orders-db: instance DOWN/,
    );
  });
});
