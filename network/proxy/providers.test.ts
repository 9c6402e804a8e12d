import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import * as http from "node:http";
import * as net from "node:net";
import {
  ConnectivityProbeInputs,
  REASONS,
  connectivityProbeProvider as probeProvider,
  parseHaproxyStats,
  reasonForError,
} from "../shared/connectivity-probe";
import { runSerialized } from "../../test/helpers/dynamic-provider";
import { PortAllocationInputs, UNKNOWN, portAllocationProvider as ports } from "./port-allocation";

/** A TCP server on 127.0.0.1 with a free port; `onConnection` decides what it does. */
async function listen(
  onConnection: (s: net.Socket) => void = () => undefined,
): Promise<net.Server & { port: number }> {
  const server = net.createServer(onConnection);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return Object.assign(server, { port: (server.address() as net.AddressInfo).port });
}

async function close(server: net.Server | http.Server): Promise<void> {
  if ("closeAllConnections" in server) server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** A port nothing listens on: bound once, then released. */
async function closedPort(): Promise<number> {
  const s = await listen();
  await close(s);
  return s.port;
}

/** An HTTP server answering every request with `body` (a fake HAProxy stats page). */
async function statsServer(body: string): Promise<http.Server & { port: number }> {
  const server = http.createServer((_req, res) => res.end(body));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return Object.assign(server, { port: (server.address() as net.AddressInfo).port });
}

const STATS_CSV = (status: string) =>
  "# pxname,svname,qcur,qmax,scur,smax,slim,stot,bin,bout,dreq,dresp,ereq,econ,eresp,wretr,wredis,status,weight,act,bck,chkfail,chkdown,lastchg,downtime,qlimit,pid,iid,sid,throttle,lbtot,tracked,type,rate,rate_lim,rate_max,check_status,check_code\n" +
  "ft_ns_a,FRONTEND,,,0,0,4096,0,0,0,0,0,0,,,,,OPEN,,,,,,,,,1,2,0,,,,0,0,0,0,,\n" +
  `bk_ns_a,instance,0,0,0,0,,0,0,0,,0,,0,0,0,0,${status},1,1,0,1,1,5,5,,1,3,1,,0,,2,0,,0,L4CON,\n` +
  "bk_ns_a,BACKEND,0,0,0,0,410,0,0,0,0,0,,0,0,0,0,DOWN,0,0,0,,1,5,5,,1,3,0,,0,,1,0,,0,,\n";

describe("PortAllocation dynamic provider", function () {
  this.timeout(30000);
  const inputs = (ids: string[], range = { from: 30000, to: 30009 }): PortAllocationInputs => ({
    range,
    ids,
    reserved: [],
  });

  it("check normalizes (sorted ids, sorted unique reserved) and names bad fields", async () => {
    const ok = await ports.check({} as PortAllocationInputs, {
      range: { from: 30000, to: 30009 },
      ids: ["ns/b", "ns/a"],
      reserved: [30005, 30004, 30005],
    });
    assert.deepEqual(ok.inputs, {
      range: { from: 30000, to: 30009 },
      ids: ["ns/a", "ns/b"],
      reserved: [30004, 30005],
    });
    const bad = await ports.check({} as PortAllocationInputs, {
      range: { from: 30010, to: 30000 },
      ids: ["ns/a", "ns/a"],
      reserved: [0],
    });
    assert.deepEqual(
      bad.failures?.map((f) => f.property),
      ["range", "ids", "reserved"],
    );
    assert.match(
      bad.failures?.[0]?.reason ?? "",
      /range\.from \(30010\) must not be greater than range\.to \(30000\)/,
    );
    assert.match(bad.failures?.[1]?.reason ?? "", /ids\[1\] duplicates connection id "ns\/a"/);
    const noIds = await ports.check(
      {} as PortAllocationInputs,
      { range: { from: 1, to: 2 } } as PortAllocationInputs,
    );
    assert.match(noIds.failures?.[0]?.reason ?? "", /ids must be a list of connection ids/);
  });

  it("check lets values that are unknown during a preview through", async () => {
    const unknownIds = await ports.check(
      {} as PortAllocationInputs,
      {
        range: { from: 30000, to: 30009 },
        ids: [UNKNOWN, "ns/a"],
      } as PortAllocationInputs,
    );
    assert.equal(unknownIds.failures, undefined);
    assert.deepEqual(unknownIds.inputs?.ids, [UNKNOWN, "ns/a"]);
    const unknownRange = await ports.check(
      {} as PortAllocationInputs,
      {
        range: UNKNOWN,
        ids: UNKNOWN,
      } as unknown as PortAllocationInputs,
    );
    assert.equal(unknownRange.failures, undefined);
    const probeCheck = await probeProvider.check(
      {} as ConnectivityProbeInputs,
      {
        host: UNKNOWN,
        port: UNKNOWN,
        stats: { url: UNKNOWN, backend: "bk_x" },
      } as unknown as ConnectivityProbeInputs,
    );
    assert.equal(probeCheck.failures, undefined);
    assert.equal(probeCheck.inputs?.port, UNKNOWN);
  });

  it("diff: changes only when the id set, range or reserved ports change; never replaces", async () => {
    const { outs } = await ports.create(inputs(["ns/a", "ns/b"]));
    assert.deepEqual(await ports.diff("id", outs!, inputs(["ns/b", "ns/a"])), {
      changes: false,
      replaces: [],
      deleteBeforeReplace: false,
    });
    for (const news of [
      inputs(["ns/a"]),
      inputs(["ns/a", "ns/b", "ns/c"]),
      inputs(["ns/a", "ns/b"], { from: 30000, to: 30019 }),
    ]) {
      const d = await ports.diff("id", outs!, news);
      assert.equal(d.changes, true);
      assert.deepEqual(d.replaces, []);
    }
    assert.equal(
      (await ports.diff("id", outs!, { ...inputs(["ns/a", "ns/b"]), reserved: [30009] })).changes,
      true,
    );
  });

  it("create allocates; update keeps prior assignments and remembers releases; read and delete", async () => {
    const { id, outs } = await ports.create(inputs(["ns/a", "ns/b", "ns/c"]));
    assert.ok(id);
    assert.deepEqual(outs!.assignments, { "ns/a": 30000, "ns/b": 30001, "ns/c": 30002 });
    const upd = await ports.update(id, outs!, inputs(["ns/a", "ns/c", "ns/d"]));
    assert.deepEqual(upd.outs!.assignments, { "ns/a": 30000, "ns/c": 30002, "ns/d": 30003 });
    assert.deepEqual(upd.outs!.released, [{ port: 30001, id: "ns/b" }]);
    assert.deepEqual(upd.outs!.ids, ["ns/a", "ns/c", "ns/d"]);
    // The state is the truth: read gives it back untouched.
    assert.deepEqual(await ports.read(id, upd.outs), { id, props: upd.outs });
    await ports.delete(id, upd.outs!);
  });

  it("update fails with the planner's message when the range is exhausted", async () => {
    const { id, outs } = await ports.create(inputs(["a", "b"], { from: 30000, to: 30001 }));
    await assert.rejects(
      async () => ports.update(id, outs!, inputs(["a", "b", "c"], { from: 30000, to: 30001 })),
      /port range 30000-30001 has 2 usable ports but 3 connections need one/,
    );
  });

  it("runs from its serialized form in a plain node process (the planner is captured by value)", async () => {
    const out = (await runSerialized(
      ports,
      `async (p) => {
        const c = await p.check({}, { range: { from: 30000, to: 30009 }, ids: ["ns/b", "ns/a"] });
        const created = await p.create(c.inputs);
        const updated = await p.update(created.id, created.outs, { ...c.inputs, ids: ["ns/b", "ns/c"] });
        return { created: created.outs.assignments, updated: updated.outs };
      }`,
    )) as Record<string, any>;
    assert.deepEqual(out.created, { "ns/a": 30000, "ns/b": 30001 });
    assert.deepEqual(out.updated.assignments, { "ns/b": 30001, "ns/c": 30002 });
    assert.deepEqual(out.updated.released, [{ port: 30000, id: "ns/a" }]);
  });
});

describe("ConnectivityProbe dynamic provider (real sockets on 127.0.0.1)", function () {
  this.timeout(30000);
  const servers: (net.Server | http.Server)[] = [];
  after(async () => {
    for (const s of servers) if (s.listening) await close(s);
  });
  const probeInputs = (
    port: number,
    extra: Partial<ConnectivityProbeInputs> = {},
  ): ConnectivityProbeInputs => ({
    host: "127.0.0.1",
    port,
    timeoutMs: 2000,
    settleMs: 300,
    ...extra,
  });

  it("check fills defaults and names bad fields", async () => {
    const ok = await probeProvider.check(
      {} as ConnectivityProbeInputs,
      { host: "db", port: 5432 } as ConnectivityProbeInputs,
    );
    assert.deepEqual(ok.inputs, { host: "db", port: 5432, timeoutMs: 3000, settleMs: 1500 });
    const bad = await probeProvider.check(
      {} as ConnectivityProbeInputs,
      {
        host: "",
        port: 0,
        timeoutMs: -1,
        backend: { host: "x", port: 99999 },
        stats: { url: "ftp://x", backend: "" },
      } as unknown as ConnectivityProbeInputs,
    );
    assert.deepEqual(
      bad.failures?.map((f) => f.property),
      ["host", "port", "backend.port", "timeoutMs", "stats.url", "stats.backend"],
    );
  });

  it("reports ConnectivityEstablished for a real listening socket", async () => {
    const server = await listen();
    servers.push(server);
    const { id, outs } = await probeProvider.create(probeInputs(server.port));
    assert.ok(id);
    assert.equal(outs!.ready, true);
    assert.equal(outs!.reason, "ConnectivityEstablished");
    assert.equal(outs!.message, `TCP connection available at 127.0.0.1:${server.port}`);
    assert.deepEqual(
      { ...outs!.condition, lastTransitionTime: undefined },
      {
        type: "Ready",
        status: "True",
        reason: "ConnectivityEstablished",
        message: outs!.message,
        lastTransitionTime: undefined,
      },
    );
    // A server that speaks first is just as alive.
    const greeter = await listen((s) => s.write("hello\n"));
    servers.push(greeter);
    assert.equal((await probeProvider.create(probeInputs(greeter.port))).outs!.ready, true);
  });

  it("records ConnectionRefused for a closed port without failing the deployment", async () => {
    const port = await closedPort();
    const { outs } = await probeProvider.create(probeInputs(port));
    assert.equal(outs!.ready, false);
    assert.equal(outs!.reason, "ConnectionRefused");
    assert.equal(outs!.condition.status, "False");
    assert.match(outs!.message, new RegExp(`no TCP connection to 127\\.0\\.0\\.1:${port}: ECONNREFUSED`));
  });

  it("records BackendUnavailable when the endpoint accepts and hangs up at once (a proxy without backend)", async () => {
    const hangUp = await listen((s) => s.destroy());
    servers.push(hangUp);
    const { outs } = await probeProvider.create(probeInputs(hangUp.port));
    assert.equal(outs!.reason, "BackendUnavailable");
    assert.match(outs!.message, /accepted the connection but closed it at once/);
  });

  it("records BackendUnavailable when the backend itself is down", async () => {
    const front = await listen();
    servers.push(front);
    const backendPort = await closedPort();
    const { outs } = await probeProvider.create(
      probeInputs(front.port, { backend: { host: "127.0.0.1", port: backendPort } }),
    );
    assert.equal(outs!.ready, false);
    assert.equal(outs!.reason, "BackendUnavailable");
    assert.match(
      outs!.message,
      new RegExp(`its backend 127\\.0\\.0\\.1:${backendPort} does not: ConnectionRefused`),
    );
  });

  it("asks HAProxy's stats page when given one", async () => {
    const front = await listen();
    const down = await statsServer(STATS_CSV("DOWN"));
    const up = await statsServer(STATS_CSV("UP"));
    servers.push(front, down, up);
    const stats = (port: number) => ({ url: `http://127.0.0.1:${port}/stats;csv`, backend: "bk_ns_a" });
    const d = await probeProvider.create(probeInputs(front.port, { stats: stats(down.port) }));
    assert.equal(d.outs!.reason, "BackendUnavailable");
    assert.equal(d.outs!.message, "HAProxy reports no server UP in backend bk_ns_a: instance DOWN (L4CON)");
    const u = await probeProvider.create(probeInputs(front.port, { stats: stats(up.port) }));
    assert.equal(u.outs!.ready, true);
    // An unreadable stats page does not flip a working connection.
    const gone = await probeProvider.create(probeInputs(front.port, { stats: stats(await closedPort()) }));
    assert.equal(gone.outs!.ready, true);
    assert.match(gone.outs!.message, /\(HAProxy stats not read: .*ECONNREFUSED/);
    const missing = await probeProvider.create(
      probeInputs(front.port, { stats: { ...stats(up.port), backend: "bk_x" } }),
    );
    assert.match(missing.outs!.message, /no server UP in backend bk_x: backend not found/);
    assert.deepEqual(parseHaproxyStats(STATS_CSV("UP"))[1], {
      proxy: "bk_ns_a",
      server: "instance",
      status: "UP",
      checkStatus: "L4CON",
    });
    assert.throws(() => parseHaproxyStats("<html>"), /not an HAProxy stats CSV/);
  });

  it("read re-probes (pulumi refresh) and keeps lastTransitionTime while the status holds", async () => {
    const server = await listen();
    servers.push(server);
    const { id, outs } = await probeProvider.create(probeInputs(server.port));
    await new Promise((r) => setTimeout(r, 20));
    const same = await probeProvider.read(id, outs);
    assert.equal(same.props!.ready, true);
    assert.equal(same.props!.condition.lastTransitionTime, outs!.condition.lastTransitionTime);
    await close(server);
    const after = await probeProvider.read(id, same.props);
    assert.equal(after.props!.ready, false);
    assert.equal(after.props!.reason, "ConnectionRefused");
    assert.notEqual(after.props!.condition.lastTransitionTime, outs!.condition.lastTransitionTime);
    const upd = await probeProvider.update(id, after.props!, probeInputs(server.port, { settleMs: 0 }));
    assert.equal(upd.outs!.reason, "ConnectionRefused");
    assert.equal(upd.outs!.condition.lastTransitionTime, after.props!.condition.lastTransitionTime);
    assert.deepEqual(await probeProvider.diff(id, upd.outs!, probeInputs(server.port, { settleMs: 0 })), {
      changes: false,
      replaces: [],
    });
    assert.equal((await probeProvider.diff(id, upd.outs!, probeInputs(server.port + 1))).changes, true);
    await probeProvider.delete(id, upd.outs!);
  });

  it("maps socket errors to condition reasons, and records Timeout when SYNs go unanswered", async function () {
    assert.equal(reasonForError({ code: "ECONNREFUSED" }), REASONS.refused);
    assert.equal(reasonForError({ code: "ETIMEDOUT" }), REASONS.timeout);
    assert.equal(reasonForError({ code: "EHOSTUNREACH" }), REASONS.unreachable);
    assert.equal(reasonForError({ code: "ENOTFOUND" }), REASONS.unreachable);
    assert.equal(reasonForError({ code: "EPIPE" }), REASONS.failed);
    // A listener that never accepts, with its backlog filled: Linux then drops new SYNs,
    // which is what a firewalled or vanished host looks like. Node always accepts, so
    // the listener is a tiny python3 process.
    const child = spawn("python3", [
      "-c",
      "import socket,sys,time\n" +
        "s=socket.socket(); s.bind(('127.0.0.1',0)); s.listen(0)\n" +
        "print(s.getsockname()[1], flush=True); time.sleep(20)",
    ]);
    const fillers: net.Socket[] = [];
    try {
      const port = await new Promise<number>((resolve, reject) => {
        child.stdout.once("data", (d: Buffer) => resolve(Number(d.toString().trim())));
        child.once("error", reject);
      });
      // Fill the accept queue (backlog 0 holds one, plus one in flight).
      for (let i = 0; i < 3; i++) fillers.push(net.connect(port, "127.0.0.1").on("error", () => undefined));
      await new Promise((r) => setTimeout(r, 200));
      const started = Date.now();
      const { outs } = await probeProvider.create({ host: "127.0.0.1", port, timeoutMs: 500, settleMs: 0 });
      assert.equal(outs!.ready, false);
      assert.equal(outs!.reason, "Timeout");
      assert.equal(outs!.message, `no TCP connection to 127.0.0.1:${port}: no answer within 500 ms`);
      assert.ok(Date.now() - started < 2000, "bounded by timeoutMs");
    } finally {
      fillers.forEach((f) => f.destroy());
      child.kill();
    }
  });

  it("runs from its serialized form in a plain node process", async () => {
    const server = await listen();
    servers.push(server);
    const refused = await closedPort();
    const out = (await runSerialized(
      probeProvider,
      `async (p) => {
        const up = await p.create({ host: "127.0.0.1", port: ${server.port}, timeoutMs: 2000, settleMs: 200 });
        const down = await p.create({ host: "127.0.0.1", port: ${refused}, timeoutMs: 2000, settleMs: 200 });
        return [up.outs.reason, down.outs.reason];
      }`,
    )) as string[];
    assert.deepEqual(out, ["ConnectivityEstablished", "ConnectionRefused"]);
  });
});
