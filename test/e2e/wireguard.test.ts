import { strict as assert } from "node:assert";
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { reapOrphans } from "../../programs/bridge/orphans";
import { LocalClusters } from "../../host/local-clusters";
import { debianPostgres } from "../../host/local-clusters/images/host-rootfs";
import type { LocalCrossplane } from "../../host/local-clusters/crossplane";
import {
  LOCAL_DATA_NETNS_ENV,
  localGatewayNames,
  localNames,
} from "../../network/wireguard/model/local-plan";
import { NFT_TABLE } from "../../network/wireguard/model/render-nftables";
import { toolchainEnv } from "../../host/automation/toolchain";
import { crossplaneWithConnectorApi } from "../helpers/crossplane-connector";
import { TestBridge } from "../helpers/bridge-process";
import {
  claimYaml,
  claimsIn,
  implementationSelector,
  isClaimReady,
  waitForClaim,
  type Claim,
} from "../helpers/kube-objects";
import { portsFor } from "../helpers/ports";
import { eventually, kubectl, kubectlApply, kubectlJson, kubectlTry } from "../helpers/kubectl";
import { NetnsDataService, nsExec, psqlIn, tcpProbe } from "../helpers/netns-data-service";
import { PsqlSession } from "../helpers/psql-session";

const CP = "wg-cp";
/** The consumer namespace of the app cluster configured for wireguard. */
const NS = "team-wg";
const GROUP = `${NS}/wireguard`;
/** Data-service hosts: two served by connections, one never on the list. */
const HOST_A = "198.51.100.10";
const HOST_B = "198.51.100.11";
const HOST_OFF = "198.51.100.12";
const PG_PORT = 5432;

/**
 * WireGuard end to end, all real: a local control plane API server, Crossplane core 1.20
 * composing TCPConnections into NetworkPaths, the bridge as a process realising the
 * wireguard group with this project's Pulumi program (local target: wireguard-go in network
 * namespaces, socat forwarders, the rendered nftables filter), and PostgreSQL 15 in a
 * data-service namespace this test creates. No traffic leaves those namespaces.
 */
describe("WireGuard end to end through the bridge (e2e)", function () {
  this.timeout(20 * 60_000);

  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-wg-e2e-"));
  const stateDir = path.join(work, "clusters");
  const bridgeDir = path.join(work, "bridge");
  const env = toolchainEnv();
  const opsPort = portsFor(__filename).one();
  const names = localNames(GROUP);
  let clusters: LocalClusters;
  let crossplane: LocalCrossplane;
  let ds: NetnsDataService;
  const kc = () => clusters.kubeconfigPath(CP);
  const gateway = () => localGatewayNames(bridgeDir, ds.ns);
  // Set when this file's set-up starts (mocha loads every spec file first).
  let started = Date.now();

  const bridge = new TestBridge({
    work,
    kubeconfig: kc,
    stateDir: bridgeDir,
    opsPort,
    extra: ["--settings", ""],
  });
  /** The bridge's local wireguard target puts the data-service side into this file's namespace. */
  const startBridge = () => bridge.start({ env: { [LOCAL_DATA_NETNS_ENV]: ds.ns } });

  const claim = (name: string, host: string, port = PG_PORT) =>
    claimYaml(name, NS, port, host, implementationSelector("wireguard"));

  const claims = () => claimsIn(kc(), NS);

  const waitReady = (name: string, timeoutMs = 240_000): Promise<Claim> =>
    waitForClaim(kc(), NS, name, {
      timeoutMs,
      diagnose: (last) => `last: ${JSON.stringify(last?.status)}\nbridge log:\n${bridge.tail(30)}`,
    });

  async function deleteClaim(name: string): Promise<void> {
    kubectl(kc(), ["-n", NS, "delete", "tcpconnection", name, "--wait=true", "--timeout=180s"]);
    await eventually(
      `the NetworkPath of ${name} to be released`,
      () =>
        kubectlJson<{ items: { spec: { connection: string; consumerNamespace?: string } }[] }>(kc(), [
          "get",
          "networkpaths",
        ]).items.every((p) => !(p.spec.consumerNamespace === NS && p.spec.connection.startsWith(name))),
      180_000,
    );
  }

  /** What identifies the tunnel: both public keys and both wireguard-go processes. */
  async function tunnelIdentity(): Promise<Record<string, string>> {
    const g = gateway();
    const wg = async (ns: string, ifname: string, what: string) =>
      (await nsExec(ns, ["wg", "show", ifname, what])).stdout.trim();
    return {
      clientKey: await wg(names.netns, names.ifname, "public-key"),
      gatewayKey: await wg(ds.ns, g.ifname, "public-key"),
      gatewayPeers: await wg(ds.ns, g.ifname, "peers"),
      clientPid: fs.readFileSync(path.join(g.dir, `${names.netns}.pid`), "utf8").trim(),
      gatewayPid: fs.readFileSync(path.join(g.dir, "gateway.pid"), "utf8").trim(),
    };
  }

  const clientAllowedIps = async () =>
    ((await nsExec(names.netns, ["wg", "show", names.ifname, "allowed-ips"])).stdout.split("\t")[1] ?? "")
      .trim()
      .split(/\s+/)
      .sort();
  const gatewayFlows = async () =>
    (await nsExec(ds.ns, ["nft", "list", "set", "inet", NFT_TABLE, "flows"])).stdout;

  /** Acts as a client that edits its own config: routes `host` into the tunnel and allows it. */
  async function rogueRoute(host: string): Promise<void> {
    const gw = (await nsExec(ds.ns, ["wg", "show", gateway().ifname, "public-key"])).stdout.trim();
    const allowed = [...(await clientAllowedIps()), `${host}/32`].join(",");
    const set = await nsExec(names.netns, ["wg", "set", names.ifname, "peer", gw, "allowed-ips", allowed]);
    assert.equal(set.code, 0, set.stderr);
    const route = await nsExec(names.netns, ["ip", "route", "replace", `${host}/32`, "dev", names.ifname]);
    assert.equal(route.code, 0, route.stderr);
  }

  before(async () => {
    started = Date.now();
    ds = new NetnsDataService([HOST_A, HOST_B, HOST_OFF], PG_PORT);
    await ds.start();
    clusters = new LocalClusters(stateDir);
    await clusters.up([CP]);
    crossplane = await crossplaneWithConnectorApi(kc(), stateDir, CP, env, "wireguard");
    kubectl(kc(), ["create", "namespace", NS]);
    startBridge();
    console.log(
      `      (control plane, Crossplane, PostgreSQL and bridge up in ${((Date.now() - started) / 1000).toFixed(1)} s)`,
    );
  });

  after(async () => {
    try {
      if (clusters && bridge.process) {
        kubectlTry(kc(), ["-n", NS, "delete", "tcpconnections", "--all", "--wait=true", "--timeout=180s"]);
      }
      await bridge.stop();
      await crossplane?.stop?.();
      if (clusters) await clusters.down();
    } finally {
      // Whatever the bridge left (a failed test): its processes and namespaces go too.
      const g = ds ? gateway() : undefined;
      if (g) {
        for (const f of fs.existsSync(g.dir) ? fs.readdirSync(g.dir, { recursive: true }) : []) {
          if (!String(f).endsWith(".pid")) continue;
          const pid = Number(fs.readFileSync(path.join(g.dir, String(f)), "utf8"));
          if (pid > 0) spawnSync("kill", ["-9", String(pid)]);
        }
      }
      spawnSync("ip", ["netns", "del", names.netns]);
      ds?.destroy();
      await reapOrphans(`file://${path.join(bridgeDir, "state")}`, () => undefined);
      fs.rmSync(work, { recursive: true, force: true });
    }
  });

  let session: PsqlSession;
  let identity: Record<string, string>;

  it("a TCPConnection becomes Ready with the forwarder's host and port; psql from the app side reaches PostgreSQL through wireguard-go", async () => {
    const t0 = Date.now();
    assert.equal(kubectlApply(kc(), claim("orders", HOST_A)).status, 0);
    const orders = await waitReady("orders");
    console.log(`      (first connection Ready in ${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    // The forwarder on the app side's loopback, on the connection's own port: not the instance.
    assert.deepEqual([orders.status?.hostForConsumer, orders.status?.port], ["127.0.0.1", PG_PORT]);
    // From the app side: PostgreSQL sees the client's tunnel address, so the session came
    // through wireguard-go (pg_hba trusts only the tunnel CIDR).
    const r = await psqlIn(
      names.netns,
      "127.0.0.1",
      PG_PORT,
      "select inet_client_addr()::text || ' ' || inet_server_addr()::text",
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout.trim(), new RegExp(`^100\\.96\\.0\\.\\d+/32 ${HOST_A.replace(/\./g, "\\.")}/32$`));
    // Nothing on the host side answers there: the forwarder lives in the app side's namespace.
    assert.deepEqual(await clientAllowedIps(), ["100.96.0.1/32", `${HOST_A}/32`]);
    assert.match(
      await gatewayFlows(),
      new RegExp(`100\\.96\\.0\\.\\d+ \\. ${HOST_A.replace(/\./g, "\\.")} \\. ${PG_PORT}`),
    );
    session = PsqlSession.inNetns(names.netns, "127.0.0.1", PG_PORT);
    assert.equal(await session.query("select 42;"), "42");
    identity = await tunnelIdentity();
  });

  it("a second connection joins the same tunnel without re-keying it; an open session keeps working", async () => {
    assert.equal(kubectlApply(kc(), claim("reports", HOST_B)).status, 0);
    const reports = await waitReady("reports");
    // The app side's port 5432 is taken by orders: the planner's fallback port.
    assert.equal(reports.status?.hostForConsumer, "127.0.0.1");
    assert.notEqual(reports.status?.port, PG_PORT);
    const r = await psqlIn(
      names.netns,
      "127.0.0.1",
      reports.status.port as number,
      "select inet_server_addr()::text",
    );
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), `${HOST_B}/32`);
    assert.deepEqual(await tunnelIdentity(), identity, "same keys, same peers, same wireguard-go processes");
    assert.ok(session.alive);
    assert.equal(await session.query("select 43;"), "43", "the session opened before the change");
    assert.deepEqual(await clientAllowedIps(), ["100.96.0.1/32", `${HOST_A}/32`, `${HOST_B}/32`]);
    const orders = claims().find((c) => c.metadata.name === "orders")!;
    assert.equal(orders.status?.port, PG_PORT, "the first connection's port did not move");
  });

  it("a host not on the list is refused by the gateway's filter, even when the client routes it into the tunnel", async () => {
    // Control: the allowed host answers over the tunnel directly (no forwarder).
    assert.equal(await tcpProbe(names.netns, HOST_A, PG_PORT), "open");
    // Before: the client does not even route it.
    assert.notEqual(await tcpProbe(names.netns, HOST_OFF, PG_PORT, 2000), "open");
    await rogueRoute(HOST_OFF);
    assert.equal(await tcpProbe(names.netns, HOST_OFF, PG_PORT, 3000), "timeout", "dropped by the gateway");
    // PostgreSQL listens there: it is the filter, not a missing service, that refuses.
    const direct = await ds.exec([
      path.join(debianPostgres().bin, "pg_isready"),
      "-h",
      HOST_OFF,
      "-p",
      String(PG_PORT),
    ]);
    assert.equal(direct.code, 0, direct.stdout);
  });

  it("a forwarder that cannot listen fails its own path only (Ready=False, ForwarderFailed, what to change) and heals once the port is free", async () => {
    // Another process in the app side's namespace holds the port the new connection's
    // forwarder would listen on (node, not socat: the forwarder's stray clean-up must not take it).
    const held = 15432;
    const blocker = spawn(
      "ip",
      [
        "netns",
        "exec",
        names.netns,
        process.execPath,
        "-e",
        `require("net").createServer().listen(${held}, "127.0.0.1")`,
      ],
      { stdio: "ignore" },
    );
    try {
      await eventually(
        "the blocker to listen",
        async () => (await tcpProbe(names.netns, "127.0.0.1", held)) === "open",
        15_000,
      );
      assert.equal(kubectlApply(kc(), claim("blocked", HOST_A, held)).status, 0);
      type Path = {
        spec: { connection: string; consumerNamespace?: string };
        status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
      };
      const blockedReady = () =>
        kubectlJson<{ items: Path[] }>(kc(), ["get", "networkpaths"])
          .items.find((p) => p.spec.consumerNamespace === NS && p.spec.connection.startsWith("blocked"))
          ?.status?.conditions?.find((c) => c.type === "Ready");
      let ready: ReturnType<typeof blockedReady>;
      await eventually(
        "the blocked path to report its forwarder's diagnosis",
        // The bridge retries a failed forwarder every reconcile; a start that was only slow on a
        // busy host says so, and the next try reaches socat's own error.
        () => {
          ready = blockedReady();
          return ready?.reason === "ForwarderFailed" && /holds port/.test(ready.message ?? "");
        },
        240_000,
      ).catch((e: Error) => {
        throw new Error(`${e.message}\nlast: ${JSON.stringify(ready)}\nbridge log:\n${bridge.tail(30)}`);
      });
      assert.equal(ready?.status, "False");
      assert.match(
        ready?.message ?? "",
        new RegExp(
          `127\\.0\\.0\\.1:${held} in ${names.netns} does not listen .*another process in network namespace ${names.netns} holds port ${held}: stop it`,
        ),
      );
      // The group's other connections were not taken down with it.
      for (const name of ["orders", "reports"])
        assert.ok(isClaimReady(claims().find((c) => c.metadata.name === name)), name);
      assert.equal(await session.query("select 47;"), "47", "the open session");
      const r = await psqlIn(names.netns, "127.0.0.1", PG_PORT, "select 48");
      assert.equal(r.stdout.trim(), "48", r.stderr);
      assert.deepEqual(await tunnelIdentity(), identity, "no re-keying");
    } finally {
      blocker.kill("SIGKILL");
    }
    // The port is free: the bridge tries the group again by itself and the path turns Ready.
    const healed = await waitReady("blocked");
    assert.deepEqual([healed.status?.hostForConsumer, healed.status?.port], ["127.0.0.1", held]);
    await deleteClaim("blocked");
  });

  it("deleting one connection removes its forwarder and its allowed host; the other keeps working", async () => {
    const reports = claims().find((c) => c.metadata.name === "reports")!;
    const port = reports.status!.port!;
    await deleteClaim("reports");
    let last = "";
    await eventually(
      "the forwarder of reports to be gone",
      async () => (last = await tcpProbe(names.netns, "127.0.0.1", port)) === "ECONNREFUSED",
      60_000,
    ).catch((e: Error) => {
      const listeners = spawnSync("ip", ["netns", "exec", names.netns, "ss", "-Hltnp"], { encoding: "utf8" });
      throw new Error(
        `${e.message} (last: ${last})\nlisteners: ${listeners.stdout}\nbridge log:\n${bridge.tail(40)}`,
      );
    });
    // The bridge set the client's list back to exactly the live connections (the rogue entry
    // of the previous test is gone too), and the gateway lost this flow.
    await eventually(
      "the client's AllowedIPs to be the remaining connection's",
      async () =>
        JSON.stringify(await clientAllowedIps()) === JSON.stringify(["100.96.0.1/32", `${HOST_A}/32`]),
      60_000,
    );
    assert.doesNotMatch(await gatewayFlows(), new RegExp(HOST_B.replace(/\./g, "\\.")));
    await rogueRoute(HOST_B);
    assert.equal(
      await tcpProbe(names.netns, HOST_B, PG_PORT, 3000),
      "timeout",
      "its host is off the gateway's list",
    );
    // The other connection: same tunnel, open session alive, new sessions work.
    assert.deepEqual(await tunnelIdentity(), identity);
    assert.equal(await session.query("select 44;"), "44");
    const r = await psqlIn(names.netns, "127.0.0.1", PG_PORT, "select 45");
    assert.equal(r.stdout.trim(), "45", r.stderr);
    await session.close();
  });

  it("a killed forwarder is seen between runs: its path says so (ForwarderFailed, naming the process) and the bridge starts it again by itself, on the same port", async () => {
    const g = gateway();
    const forwarders = fs.readdirSync(path.join(g.dir, "forwarders")).filter((f) => f.endsWith(".pid"));
    assert.equal(forwarders.length, 1, forwarders.join(", "));
    const pidFile = path.join(g.dir, "forwarders", forwarders[0]!);
    const killedPid = fs.readFileSync(pidFile, "utf8").trim();
    const pathName = kubectlJson<{ items: { metadata: { name: string }; spec: { connection: string } }[] }>(
      kc(),
      ["get", "networkpaths"],
    ).items.find((p) => p.spec.connection.startsWith("orders"))!.metadata.name;
    const killed = Date.now();
    process.kill(-Number(killedPid), "SIGKILL");
    // The health poll (every 2 s) writes Ready=False with an Event; the run it starts puts the
    // forwarder back within seconds, so the Event is what stays to be read.
    const said = () =>
      kubectlJson<{ items: { message: string }[] }>(kc(), [
        "get",
        "events",
        "-A",
        "--field-selector",
        `involvedObject.name=${pathName}`,
      ]).items.filter((e) => /the forwarder of .* \(socat in .*\) is not running/.test(e.message));
    await eventually(
      "an Event saying the path's forwarder is not running",
      () => said().length > 0,
      60_000,
    ).catch((e: Error) => {
      throw new Error(`${e.message}\nbridge log:\n${bridge.tail(30)}`);
    });
    const seenAfter = (Date.now() - killed) / 1000;
    await eventually(
      "psql through the path the bridge healed by itself",
      async () => (await psqlIn(names.netns, "127.0.0.1", PG_PORT, "select 49")).stdout.trim() === "49",
      120_000,
    ).catch((e: Error) => {
      throw new Error(`${e.message}\nbridge log:\n${bridge.tail(30)}`);
    });
    const usableAfter = (Date.now() - killed) / 1000;
    const healed = await waitReady("orders");
    assert.deepEqual([healed.status?.hostForConsumer, healed.status?.port], ["127.0.0.1", PG_PORT]);
    assert.notEqual(fs.readFileSync(pidFile, "utf8").trim(), killedPid, "a new forwarder");
    console.log(
      `      (a forwarder killed → said on its path within ${seenAfter.toFixed(1)} s, psql through it again in ${usableAfter.toFixed(1)} s, no restart of the bridge)`,
    );
  });

  it("a killed wireguard-go and forwarder are healed by the next reconcile (a restarted bridge) with the same key and address", async () => {
    const g = gateway();
    const pidOf = (file: string) => Number(fs.readFileSync(path.join(g.dir, file), "utf8").trim());
    const address = (await nsExec(names.netns, ["ip", "-4", "-o", "addr", "show", "dev", names.ifname]))
      .stdout;
    process.kill(pidOf(`${names.netns}.pid`), "SIGKILL");
    // The one connection left is orders: its forwarder is the one pid file there.
    const forwarders = fs.readdirSync(path.join(g.dir, "forwarders")).filter((f) => f.endsWith(".pid"));
    assert.equal(forwarders.length, 1, forwarders.join(", "));
    process.kill(-pidOf(`forwarders/${forwarders[0]}`), "SIGKILL");
    await eventually(
      "the path to be down",
      async () => (await psqlIn(names.netns, "127.0.0.1", PG_PORT, "select 1")).code !== 0,
      30_000,
    );
    // A restarted bridge lists every path and reconciles every group: the diffs see the dead
    // processes and the updates bring them back in place.
    await bridge.stop();
    startBridge();
    await eventually(
      "psql through the healed path",
      async () => (await psqlIn(names.netns, "127.0.0.1", PG_PORT, "select 46")).stdout.trim() === "46",
      180_000,
    ).catch((e: Error) => {
      throw new Error(`${e.message}\nbridge log:\n${bridge.tail(30)}`);
    });
    const healed = await tunnelIdentity();
    assert.equal(healed.clientKey, identity.clientKey, "the same key pair");
    assert.equal(healed.gatewayKey, identity.gatewayKey);
    assert.equal(healed.gatewayPid, identity.gatewayPid, "the gateway was left alone");
    assert.notEqual(healed.clientPid, identity.clientPid, "a new wireguard-go");
    const again = (await nsExec(names.netns, ["ip", "-4", "-o", "addr", "show", "dev", names.ifname])).stdout;
    assert.equal(again.match(/inet (\S+)/)?.[1], address.match(/inet (\S+)/)?.[1], "the same tunnel address");
  });

  it("deleting the last connection removes the client namespace, the gateway and every process", async () => {
    const g = gateway();
    await deleteClaim("orders");
    await eventually(
      "the client namespace to be gone",
      () => !spawnSync("ip", ["netns", "list"], { encoding: "utf8" }).stdout.includes(names.netns),
      60_000,
    );
    const procs = (pattern: string) =>
      spawnSync("pgrep", ["-f", pattern], { encoding: "utf8" }).stdout.trim();
    assert.equal(procs(`wireguard-go -f ${names.ifname}`), "");
    assert.equal(procs(`wireguard-go -f ${g.ifname}`), "");
    assert.equal(procs(`TCP:${HOST_A}:${PG_PORT}`), "");
    assert.equal(procs(`TCP:${HOST_B}:${PG_PORT}`), "");
    const table = await nsExec(ds.ns, ["nft", "list", "table", "inet", NFT_TABLE]);
    assert.notEqual(table.code, 0, "the gateway's filter went with the gateway");
    console.log(`      (whole run ${((Date.now() - started) / 1000).toFixed(1)} s)`);
  });
});
