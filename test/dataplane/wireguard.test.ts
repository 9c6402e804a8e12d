import { strict as assert } from "node:assert";
import { WireguardPlan, planWireguard } from "../../network/wireguard/model/planner";
import {
  DB_HOST,
  DB_PORT,
  GATEWAY_UNDERLAY,
  WireguardLab,
  connectionA,
  connectionB,
  labPlanInput,
} from "./wireguard-lab";
import { PsqlSession } from "../helpers/psql-session";

/** A port on the data-service host that no connection serves. */
const PROBE_PORT = 7777;

/**
 * The WireGuard path for real: wireguard-go tunnels between network namespaces, configured
 * from the project's rendered setconf files and nftables rules, with PostgreSQL 15 behind
 * the gateway. See wireguard-lab.ts for the topology and why the underlay cannot reach the
 * database.
 */

describe("WireGuard data plane (wireguard-go in network namespaces, PostgreSQL 15)", function () {
  this.timeout(60000);
  const lab = new WireguardLab();
  let plan: WireguardPlan;

  before(async function () {
    this.timeout(60000);
    await lab.setupUnderlay();
    await lab.makeKeys();
    await lab.startPostgres();
    await lab.startTcpServer(DB_HOST, PROBE_PORT);
    plan = await lab.bringUp([connectionA()]);
  });

  after(async function () {
    this.timeout(30000);
    await lab.cleanup();
  });

  it("plans A with the requested endpoint and B with no data-service route", () => {
    assert.deepEqual(plan.assignments, { "app-a": "100.96.0.2", "app-b": "100.96.0.3" });
    assert.equal(plan.clients[0]!.endpoint, `${GATEWAY_UNDERLAY["app-a"]}:51820`);
    assert.deepEqual(plan.clients[0]!.routes, ["100.96.0.1/32", `${DB_HOST}/32`]);
    assert.deepEqual(plan.clients[1]!.routes, ["100.96.0.1/32"]);
  });

  it("A reaches PostgreSQL through the tunnel, and only through it", async () => {
    const r = await lab.psql("appA", "select inet_client_addr()");
    assert.equal(r.code, 0, r.stderr);
    // the database sees A's tunnel address: the packets came out of the gateway's wg interface
    assert.equal(r.stdout.trim(), "100.96.0.2");
    const handshakes = await lab.run("ds", ["wg", "show", lab.ifname.ds, "latest-handshakes"]);
    assert.match(handshakes, /\t[1-9]\d*$/m, "the gateway has a handshake with A");
  });

  it("B, with no connection to the instance, cannot reach it: no route into the tunnel", async () => {
    const r = await lab.psql("appB", "select 1", 2);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /unreachable|timeout expired/i);
  });

  it("B cannot reach it even after widening its own tunnel config: the gateway filter drops it", async () => {
    const peer = (await lab.run("appB", ["wg", "show", lab.ifname.appB, "peers"])).trim();
    await lab.run("appB", [
      "wg",
      "set",
      lab.ifname.appB,
      "peer",
      peer,
      "allowed-ips",
      `100.96.0.1/32,${DB_HOST}/32`,
    ]);
    await lab.run("appB", ["ip", "route", "replace", `${DB_HOST}/32`, "dev", lab.ifname.appB]);
    try {
      const r = await lab.psql("appB", "select 1", 2);
      assert.notEqual(r.code, 0);
      // dropped, not refused: nothing answered at all
      assert.match(r.stderr, /timeout expired/i);
      const bKey = (await lab.run("appB", ["wg", "show", lab.ifname.appB, "public-key"])).trim();
      const transfer = await lab.run("ds", ["wg", "show", lab.ifname.ds, "transfer"]);
      const bLine = transfer.split("\n").find((l) => l.startsWith(bKey));
      assert.ok(bLine && Number(bLine.split("\t")[1]) > 0, "B's packets did arrive at the gateway");
    } finally {
      await lab.run("appB", ["ip", "route", "del", `${DB_HOST}/32`, "dev", lab.ifname.appB]);
      await lab.configureClient(plan, "app-b");
    }
  });

  it("B cannot reach it over the underlay either, though the underlay path itself works", async () => {
    await lab.run("appB", ["ip", "route", "replace", `${DB_HOST}/32`, "via", GATEWAY_UNDERLAY["app-b"]]);
    try {
      // a port the gateway does not serve answers over the underlay: the route itself works
      assert.equal(await lab.tcpProbe("appB", DB_HOST, PROBE_PORT, 2000), "open");
      assert.equal(await lab.tcpProbe("appB", DB_HOST, DB_PORT, 2000), "timeout");
      const r = await lab.psql("appB", "select 1", 2);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /timeout expired/i);
    } finally {
      await lab.run("appB", ["ip", "route", "del", `${DB_HOST}/32`]);
    }
  });

  it("restarting the gateway's wireguard-go with the same rendered config restores A", async function () {
    this.timeout(60000);
    const before = lab.gatewayConfig(plan);
    await lab.stopWireguard("ds");
    const down = await lab.psql("appA", "select 1", 1);
    assert.notEqual(down.code, 0, "A is cut off while the gateway is down");
    await lab.startWireguard("ds");
    await lab.configureGateway(plan);
    assert.equal(lab.gatewayConfig(plan), before, "the same rendered config, no change");
    // A still holds the old session; WireGuard re-handshakes ~15 s after unanswered data.
    const started = Date.now();
    let last = "";
    while (Date.now() - started < 45000) {
      const r = await lab.psql("appA", "select inet_client_addr()", 3);
      if (r.code === 0) {
        assert.equal(r.stdout.trim(), "100.96.0.2");
        console.log(
          `      (A reconnected ${((Date.now() - started) / 1000).toFixed(1)} s after the gateway restart)`,
        );
        return;
      }
      last = r.stderr;
    }
    assert.fail(`A did not reconnect within 45 s: ${last}`);
  });

  it("a client that drops its session once the gateway is back reaches it at once, not after WireGuard's 15 s", async function () {
    this.timeout(60000);
    await lab.stopWireguard("ds");
    await lab.startWireguard("ds");
    await lab.configureGateway(plan);
    // The new gateway drops what A sends in its old session: without the reset, a try now fails
    // (the test before this one waits out WireGuard's own re-handshake).
    const stale = await lab.psql("appA", "select 1", 2);
    assert.notEqual(stale.code, 0, "A's old session is dead at the new gateway");
    // What the client pod's tunnel container does when its agent's fetches fail.
    const reset = Date.now();
    await lab.resetClientSession(plan, "app-a");
    const r = await lab.psql("appA", "select inet_client_addr()", 3);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), "100.96.0.2");
    console.log(
      `      (A reconnected ${((Date.now() - reset) / 1000).toFixed(1)} s after dropping its session)`,
    );
  });

  it("adding a connection for B makes B work without disturbing A's open session", async function () {
    this.timeout(60000);
    const session = new PsqlSession(
      lab.spawnIn("appA", [
        "psql",
        "-X",
        "-At",
        `host=${DB_HOST} port=${DB_PORT} user=postgres dbname=postgres connect_timeout=5`,
      ]),
    );
    const first = await session.query("select pg_backend_pid() || ' ' || host(inet_client_addr());");
    const [pid, addr] = first.split(" ");
    assert.equal(addr, "100.96.0.2");

    const next = planWireguard(labPlanInput([connectionA(), connectionB()], plan.assignments));
    assert.deepEqual(next.assignments, plan.assignments, "nobody's tunnel address moves");
    assert.equal(lab.clientConfig(next, "app-a"), lab.clientConfig(plan, "app-a"), "A's config is untouched");
    await lab.syncGateway(next);
    await lab.loadFilter(next);
    // B's client config changed, so in a cluster its pod restarts: a full setconf models that
    // (fresh peer state, immediate handshake) where syncconf would keep a session the
    // restarted gateway no longer knows.
    await lab.configureClient(next, "app-b");

    const b = await lab.psql("appB", "select host(inet_client_addr())", 5);
    assert.equal(b.code, 0, b.stderr);
    assert.equal(b.stdout.trim(), "100.96.0.3");

    const again = await session.query("select pg_backend_pid() || ' ' || host(inet_client_addr());");
    assert.equal(again, `${pid} 100.96.0.2`, "same backend: the session survived the change");
    assert.ok(session.alive);
    plan = next;
  });
});
