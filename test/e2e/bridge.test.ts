import { CROSSPLANE_LEGACY_VERSION } from "../../lib/config/crossplane-versions";
import { strict as assert } from "node:assert";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { reapOrphans } from "../../programs/bridge/orphans";
import { localCrossplaneSource } from "../../host/automation/local-crossplane-source";
import { LocalClusters } from "../../host/local-clusters";
import { LocalCrossplane } from "../../host/local-clusters/crossplane";
import {
  compositionName,
  noopComposition,
  pulumiBackedComposition,
  renderResourcesMode,
} from "../../lib/connector-api/compositions";
import { connectorXrd } from "../../lib/connector-api/xrd";
import { networkPathCrd } from "../../lib/connector-api/network-path-crd";
import { renderBridgeSettings } from "../../lib/bridge/settings";
import { bridgeSettings } from "../../network/plugins/bridge-settings";
import { environmentSchema } from "../../components/config/schema";
import { toolchainEnv } from "../../host/automation/toolchain";
import { Postgres, descendants } from "../helpers/pg-haproxy";
import { startS3Server } from "../helpers/s3-server";
import { startBridgeProcess, stopBridgeProcess } from "../helpers/bridge-process";
import { claimYaml, claimsIn, isClaimReady, waitForClaim, type Claim } from "../helpers/kube-objects";
import { nodePortsFor, portsFor } from "../helpers/ports";
import { claimDiagnosis } from "../helpers/claim-diagnosis";
import { eventually, kubectl, kubectlApply, kubectlJson, kubectlTry } from "../helpers/kubectl";
import { heldSlots, parseSlots } from "../../lib/bridge/slots";

const CP = "bridge-cp";
const NS = "team-a";
/** Claims of routed and NOOP implementations live apart, so the proxy tests' counts hold. */
const ROUTED_NS = "team-routed";
/**
 * Kill trials in a run: four each of create, update and delete, each at a random point of the
 * reconcile (about 14 s a trial). KLUTCH_BRIDGE_FAULT_TRIALS and _RUNS make a longer soak.
 */
const TRIALS = Number(process.env.KLUTCH_BRIDGE_FAULT_TRIALS ?? 12);
/** Runs of the kill trials in a row (each TRIALS trials, one with a corrupted checkpoint). */
const RUNS = Number(process.env.KLUTCH_BRIDGE_FAULT_RUNS ?? 1);

/**
 * The Crossplane bridge end to end, all real: a local control plane API server, Crossplane
 * core 1.20 composing XTCPConnections into NetworkPaths, the bridge as a process running
 * this project's Pulumi program through the real CLI, Debian HAProxy and PostgreSQL.
 */
describe("Crossplane bridge on real Crossplane (e2e)", function () {
  this.timeout(30 * 60_000);

  const work = fs.mkdtempSync(path.join(os.tmpdir(), "klutch-bridge-"));
  const stateDir = path.join(work, "clusters");
  const bridgeDir = path.join(work, "bridge");
  /** State of the kubernetes-target bridge of the last test. */
  const k8sDir = path.join(work, "bridge-k8s");
  /** State shared by the two replicas of the leader-election test (like a shared backend). */
  const haDir = path.join(work, "bridge-ha");
  /** State of the bridge of the capacity test (small slots). */
  const capDir = path.join(work, "bridge-cap");
  /** State of the bridge of the split-slots test (a group in two blocks). */
  const splitDir = path.join(work, "bridge-split");
  const env = toolchainEnv();
  const hostPorts = portsFor(__filename);
  const opsPort = hostPorts.one();
  /** The ops ports of the two replicas of the leader-election test. */
  const haOpsPorts = [hostPorts.one(), hostPorts.one()];
  /** The S3 server (moto) the leader-election test's replicas keep their stacks in. */
  const s3Port = hostPorts.one();
  /** The proxies' port range, from this file's own band (test/helpers/ports.ts says why). */
  const proxyRange = hostPorts.block(500);
  const portBase = proxyRange.from;
  /** The NodePorts of the kubernetes-target test's app cluster. */
  const appNodePorts = nodePortsFor(__filename).block(100);
  let clusters: LocalClusters;
  let crossplane: LocalCrossplane;
  let pg: Postgres;
  let bridge: ChildProcess | undefined;
  const bridgeLog: string[] = [];
  const kc = () => clusters.kubeconfigPath(CP);

  function startBridge(extra: string[] = [], dir = bridgeDir): void {
    bridge = spawnBridge(extra, dir, opsPort, bridgeLog, "bridge.log");
  }

  /** A bridge process; its output goes to `lines` and to `logName` in the work dir. */
  function spawnBridge(
    extra: string[],
    dir: string,
    port: number,
    lines: string[],
    logName: string,
    processEnv?: Record<string, string>,
  ): ChildProcess {
    return startBridgeProcess({
      work,
      kubeconfig: kc(),
      stateDir: dir,
      opsPort: port,
      portRange: proxyRange,
      PATH: env.PATH,
      log: lines,
      logName,
      extra,
      ...(processEnv ? { env: processEnv } : {}),
    });
  }

  async function killBridge(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    const b = bridge;
    bridge = undefined;
    await stopBridgeProcess(b, signal);
    // A killed bridge may leave `pulumi` children running an update; they die without their client.
    await eventually("the bridge's pulumi processes to end", () => pulumiChildren().length === 0, 60_000);
  }

  /** PIDs of the processes whose command line contains `pattern`, ascending. */
  function pgrep(pattern: string): number[] {
    const out = spawnSync("pgrep", ["-f", pattern], { encoding: "utf8" }).stdout.trim();
    return out
      ? out
          .split("\n")
          .map(Number)
          .sort((a, b) => a - b)
      : [];
  }

  /**
   * The engine runs of this file's bridges: `pulumi up|destroy … --exec-kind auto.inline
   * [--event-log …] --stack np-…` whose backend lies in this file's work dir. The command line
   * alone is not enough: e2e files run side by side, and their bridges (processes, or pods on a
   * local node, which are processes of this machine too) run engines with the same arguments.
   */
  function pulumiChildren(): number[] {
    return pgrep("exec-kind auto.inline.* --stack np-").filter((pid) => {
      try {
        return fs
          .readFileSync(`/proc/${pid}/environ`, "utf8")
          .split("\0")
          .some((e) => e.startsWith("PULUMI_BACKEND_URL=") && e.includes(work));
      } catch {
        return false; // gone meanwhile
      }
    });
  }

  /** A bridge's /metrics text, or "" while it does not answer (starting, or gone). */
  async function metricsText(port: number): Promise<string> {
    return (await (await fetch(`http://127.0.0.1:${port}/metrics`).catch(() => undefined))?.text()) ?? "";
  }

  async function apiServerPid(): Promise<number> {
    const status = (await clusters.status()).find((s) => s.name === CP);
    const pid = (status as unknown as { components: Record<string, { pid?: number }> }).components[
      "kube-apiserver"
    ]?.pid;
    assert.ok(pid, "the API server's pid");
    return pid;
  }

  const claim = (name: string, extra: Record<string, unknown> = {}) =>
    claimYaml(name, NS, pg.port, "127.0.0.1", extra);

  const claims = () => claimsIn(kc(), NS);

  const psql = (host: string, port: number) =>
    spawnSync("psql", ["-h", host, "-p", String(port), "-U", "postgres", "-tAc", "select 42"], {
      encoding: "utf8",
      timeout: 10_000,
    });

  /**
   * psql through a port, asked again for up to 60 s until it answers: under a loaded machine one
   * attempt may outlast psql's timeout, and a process just started may not listen yet. A failure
   * shows the last attempt.
   */
  async function psqlAnswers(port: number): Promise<void> {
    // eventually runs the check at least once, so a failure always has an attempt to show.
    let last: ReturnType<typeof psql> | undefined;
    await eventually(
      `psql through port ${port}`,
      () => (last = psql("127.0.0.1", port)).stdout.trim() === "42",
      60_000,
    ).catch((e: Error) => {
      throw new Error(
        `${e.message}: exit ${String(last?.status)}, signal ${String(last?.signal)}, stderr ${last?.stderr}`,
      );
    });
  }

  function refused(port: number): Promise<boolean> {
    return new Promise((resolve) => {
      const s = net.connect({ host: "127.0.0.1", port });
      s.once("connect", () => {
        s.destroy();
        resolve(false);
      });
      s.once("error", () => resolve(true));
    });
  }

  const waitReady = (name: string, timeoutMs = 180_000): Promise<Claim> =>
    waitForClaim(kc(), NS, name, {
      timeoutMs,
      diagnose: () =>
        `${claimDiagnosis(kc(), NS, name, crossplane.logFile)}\nbridge log:\n${bridgeLog.slice(-30).join("")}`,
    });

  /**
   * The bridge has nothing running or queued: no engine for 3 s in a row (a reconcile that
   * converged() saw finish may be followed by one more, e.g. for Crossplane's own writes).
   */
  async function idle(): Promise<void> {
    let quietSince = Date.now();
    await eventually(
      "the bridge to be idle",
      async () => {
        const busy =
          pulumiChildren().length > 0 || !/^klutch_bridge_queue_depth 0$/m.test(await metricsText(opsPort));
        if (busy) quietSince = Date.now();
        return Date.now() - quietSince >= 3000;
      },
      120_000,
    );
  }

  /** Every claim Ready, distinct ports, psql through each, no path left over or stuck. */
  async function converged(): Promise<void> {
    await eventually(
      "every connection to be Ready and every deleted path to be gone",
      () => {
        const all = claims();
        const paths = kubectlJson<{ items: { metadata: { deletionTimestamp?: string } }[] }>(kc(), [
          "get",
          "networkpaths",
        ]).items;
        return (
          all.every(isClaimReady) &&
          paths.length === all.length &&
          paths.every((p) => !p.metadata.deletionTimestamp)
        );
      },
      240_000,
    ).catch((e: Error) => {
      throw new Error(`${e.message}\nbridge log:\n${bridgeLog.slice(-40).join("")}`);
    });
    const all = claims();
    const ports = all.map((c) => c.status!.port!);
    assert.equal(new Set(ports).size, ports.length, `duplicate ports: ${ports.join(", ")}`);
    for (const c of all) {
      const r = psql(c.status!.hostForConsumer!, c.status!.port!);
      assert.equal(r.stdout.trim(), "42", `${c.metadata.name}: ${r.stderr}`);
    }
  }

  before(async () => {
    clusters = new LocalClusters(stateDir);
    await clusters.up([CP]);
    const source = localCrossplaneSource(
      [env.KLUTCH_CROSSPLANE_LEGACY_CLUSTER_DIR],
      CROSSPLANE_LEGACY_VERSION,
    );
    kubectl(kc(), ["apply", "--server-side", "-f", source.crdsPath]);
    kubectl(kc(), ["wait", "--for=condition=Established", "crd", "--all", "--timeout=120s"]);
    const manifests = [
      connectorXrd(compositionName("proxy")),
      renderResourcesMode(noopComposition()),
      renderResourcesMode(pulumiBackedComposition("proxy")),
      renderResourcesMode(pulumiBackedComposition("awsVpcPeering")),
      networkPathCrd(),
    ];
    for (const m of manifests) assert.equal(kubectlApply(kc(), JSON.stringify(m)).status, 0);
    crossplane = new LocalCrossplane(stateDir, CP, env);
    await crossplane.start();
    await eventually(
      "the XRD to be established",
      () => kubectlTry(kc(), ["get", "crd", "tcpconnections.klutch.anynines.com"]).status === 0,
    );
    kubectl(kc(), ["create", "namespace", NS]);
    kubectl(kc(), ["create", "namespace", ROUTED_NS]);
    pg = await Postgres.start();
    startBridge();
  });

  after(async () => {
    try {
      // Let the bridge release what it made before the cluster goes.
      if (clusters && bridge) {
        kubectlTry(kc(), ["-n", NS, "delete", "tcpconnections", "--all", "--wait=true", "--timeout=120s"]);
      }
      await killBridge("SIGTERM");
      await crossplane?.stop?.();
      if (clusters) await clusters.down();
      await pg?.destroy().catch(() => undefined);
    } finally {
      // Neither HAProxy nor an engine process of the bridge may outlive the test.
      for (const dir of [bridgeDir, haDir, capDir, splitDir]) spawnSync("pkill", ["-f", `${dir}/proxies`]);
      for (const dir of [bridgeDir, k8sDir, haDir, capDir, splitDir])
        await reapOrphans(`file://${path.join(dir, "state")}`, () => undefined);
      fs.rmSync(work, { recursive: true, force: true });
    }
  });

  let orders: Claim;

  it("an XTCPConnection Crossplane composes gets a real path: Ready, hostForConsumer/port, psql works", async () => {
    assert.equal(kubectlApply(kc(), claim("orders")).status, 0);
    orders = await waitReady("orders");
    assert.equal(orders.status?.hostForConsumer, "127.0.0.1");
    assert.notEqual(orders.status?.port, pg.port);
    const r = psql("127.0.0.1", orders.status.port!);
    assert.equal(r.stdout.trim(), "42", r.stderr);
    // Crossplane did the composing: the XR owns a NetworkPath that the bridge finalizes.
    const paths = kubectlJson<{
      items: {
        metadata: { finalizers?: string[] };
        status: { conditions: { type: string; reason: string }[] };
      }[];
    }>(kc(), ["get", "networkpaths"]).items;
    assert.equal(paths.length, 1);
    assert.ok(paths[0]!.metadata.finalizers?.includes("klutch.anynines.com/network-path"));
    assert.equal(
      paths[0]!.status.conditions.find((c) => c.type === "Ready")?.reason,
      "ConnectivityEstablished",
    );
  });

  it("a restarted bridge leaves running proxies alone: the same HAProxy keeps serving", async () => {
    const proxies = () => pgrep(`${bridgeDir}/proxies`);
    const before = proxies();
    assert.ok(before.length > 0, "an HAProxy process serves the first connection");
    // An operator's own pulumi-like process on the bridge's backend: no bridge started it,
    // so the restarted bridge's reaper must leave it alone (programs/bridge/orphans.ts).
    const decoy = spawn("sleep", ["300"], {
      env: { PATH: env.PATH, PULUMI_BACKEND_URL: `file://${path.join(bridgeDir, "state")}` },
      stdio: "ignore",
      detached: true,
    });
    await killBridge();
    startBridge();
    // At start the bridge reaps what a killed predecessor left behind, then reconciles every
    // group; one successful reconcile means both are done.
    await eventually(
      "the restarted bridge to reconcile",
      async () => /klutch_bridge_reconciles_total\{result="success"\} [1-9]/.test(await metricsText(opsPort)),
      60_000,
    );
    assert.deepEqual(proxies(), before, "the data path's HAProxy was not restarted or reaped");
    const r = psql("127.0.0.1", orders.status!.port!);
    assert.equal(r.stdout.trim(), "42", r.stderr);
    try {
      assert.equal(decoy.exitCode, null, "the operator's process survived the reaper");
      process.kill(decoy.pid!, 0);
    } finally {
      decoy.kill("SIGKILL");
    }
  });

  it("a second connection gets its own port; /healthz and /metrics report the bridge's work", async () => {
    assert.equal(kubectlApply(kc(), claim("reports")).status, 0);
    const reports = await waitReady("reports");
    assert.notEqual(reports.status?.port, orders.status?.port);
    assert.equal(psql("127.0.0.1", reports.status!.port!).stdout.trim(), "42");
    const health = await fetch(`http://127.0.0.1:${opsPort}/healthz`);
    assert.equal(health.status, 200);
    const metrics = await (await fetch(`http://127.0.0.1:${opsPort}/metrics`)).text();
    assert.match(metrics, /klutch_bridge_reconciles_total\{result="success"\} [1-9]/);
    assert.match(metrics, /klutch_bridge_engine_runs_total [1-9]/);
  });

  it("the group's HAProxy process killed by hand: the health poll sees it, the run it starts brings the process back within a poll and a run, and psql works on the same ports", async () => {
    const proxies = () => pgrep(`${bridgeDir}/proxies`);
    // Killed while nothing runs: a run in flight (the last case's claim brings one more for
    // Crossplane's own writes) would restart the process itself, before the poll could report it.
    await idle();
    const [victim] = proxies();
    assert.ok(victim, "an HAProxy process serves the group");
    const logged = bridgeLog.length;
    const killed = Date.now();
    process.kill(victim, "SIGKILL");
    // The poll (every 2 s) reads ProxyUnavailable: the paths say Ready=False at once
    // (programs/bridge/health-report.ts), and the run it starts restarts the process (LocalHaproxy
    // counts a dead one a change) and writes them Ready again: unusable for at most a poll and a
    // run (ProxyUnavailable itself is shown against a real HAProxy in network/proxy/path-health.test.ts).
    await eventually(
      "a new HAProxy process serving the group",
      () => proxies().length > 0 && !proxies().includes(victim),
      60_000,
    );
    console.log(
      `      (HAProxy killed → a new process serves in ${((Date.now() - killed) / 1000).toFixed(1)} s)`,
    );
    const said = bridgeLog.slice(logged).join("");
    assert.match(said, /a path's health changed \(its data path says so\); running its group again/);
    assert.match(said, /paths whose data path cannot be used now are Ready=False/, said);
    // The new process is there before it listens (it reads its config and binds after the
    // pgrep can see it), so psql is asked again until it answers, within the same bound.
    await psqlAnswers(orders.status!.port!);
    console.log(
      `      (HAProxy killed → psql answers again in ${((Date.now() - killed) / 1000).toFixed(1)} s)`,
    );
    await eventually(
      "the claim Ready again on its port",
      () => {
        const now = claims().find((c) => c.metadata.name === "orders");
        return isClaimReady(now) && now?.status?.port === orders.status?.port;
      },
      60_000,
    );
  });

  it("deleting a connection removes its path and leaves the other untouched", async () => {
    const ordersPort = orders.status!.port!;
    kubectl(kc(), ["-n", NS, "delete", "tcpconnection", "orders", "--wait=true", "--timeout=180s"]);
    await eventually(
      "the orders NetworkPath to be gone",
      () =>
        claims().length === 1 &&
        kubectlJson<{ items: unknown[] }>(kc(), ["get", "networkpaths"]).items.length === 1,
      180_000,
    );
    // The old HAProxy process lets go of the listener once the reloaded one has taken over.
    let closed = false;
    for (let i = 0; i < 30 && !closed; i++) {
      closed = await refused(ordersPort);
      if (!closed) await new Promise((r) => setTimeout(r, 500));
    }
    assert.ok(closed, "the deleted connection's port still accepts connections after 15 s");
    const reports = claims()[0]!;
    assert.equal(psql("127.0.0.1", reports.status!.port!).stdout.trim(), "42");
  });

  let nextTrialClaim = 0;
  for (let run = 1; run <= RUNS; run++)
    it(`converges after the bridge is killed at random points of create, update and delete (${TRIALS} trials${RUNS > 1 ? `, run ${run} of ${RUNS}` : ""})`, async () => {
      const ops = ["create", "update", "delete"] as const;
      // A connection that stays (made by an earlier test; here too when this test runs alone),
      // so the group and its checkpoint live through every trial.
      if (!claims().some((c) => c.metadata.name === "reports"))
        assert.equal(kubectlApply(kc(), claim("reports")).status, 0);
      const live = new Set<string>([
        "reports",
        ...claims()
          .map((c) => c.metadata.name)
          .filter((n) => n.startsWith("f-")),
      ]);
      for (let t = 0; t < TRIALS; t++) {
        const op = ops[t % 3]!;
        const existing = [...live].filter((n) => n !== "reports");
        if (op === "create" || existing.length === 0) {
          const name = `f-${nextTrialClaim++}`;
          assert.equal(kubectlApply(kc(), claim(name)).status, 0);
          live.add(name);
        } else if (op === "update") {
          // Toggle the PostgreSQL health check: a new HAProxy config for the group.
          const name = existing[t % existing.length]!;
          const enhancements = t % 2 === 0 ? [] : [{ InstanceType: "PostgreSQL" }];
          assert.equal(kubectlApply(kc(), claim(name, { enhancements })).status, 0);
        } else {
          const name = existing[t % existing.length]!;
          kubectl(kc(), ["-n", NS, "delete", "tcpconnection", name, "--wait=false"]);
          live.delete(name);
        }
        await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 4000)));
        await killBridge();
        if (t === Math.floor(TRIALS / 2)) {
          // One trial also finds what a kill can leave behind in the file backend: the
          // checkpoint's metadata sidecar emptied (the real "failed to load checkpoint: EOF")
          // and the checkpoint itself cut in half.
          const checkpoint = path.join(
            bridgeDir,
            "state",
            ".pulumi",
            "stacks",
            "klutch-network-paths",
            "np-team-a-proxy.json",
          );
          assert.ok(fs.existsSync(checkpoint), "the group's checkpoint");
          fs.truncateSync(`${checkpoint}.attrs`, 0);
          fs.truncateSync(checkpoint, Math.floor(fs.statSync(checkpoint).size / 2));
        }
        startBridge();
        await converged();
      }
    });

  it("converges after the control plane API server restarts during a reconcile", async () => {
    assert.equal(kubectlApply(kc(), claim("during-restart")).status, 0);
    await new Promise((r) => setTimeout(r, 1500));
    process.kill(await apiServerPid(), "SIGKILL");
    await new Promise((r) => setTimeout(r, 1000));
    await clusters.up([CP]);
    await crossplane.start();
    await converged();
  });

  it("an unreadable checkpoint heals: truncated to 0 bytes while running, its metadata emptied, to half across a restart, and with no older copy", async () => {
    const stacks = path.join(bridgeDir, "state", ".pulumi", "stacks", "klutch-network-paths");
    const checkpoint = path.join(stacks, "np-team-a-proxy.json");
    const backups = path.join(
      bridgeDir,
      "state",
      ".pulumi",
      "backups",
      "klutch-network-paths",
      "np-team-a-proxy",
    );
    assert.ok(fs.existsSync(checkpoint), "the group's checkpoint where Pulumi 3.248's file backend keeps it");
    assert.ok(fs.existsSync(`${checkpoint}.bak`), "and the previous one beside it");
    const portsOf = () => Object.fromEntries(claims().map((c) => [c.metadata.name, c.status?.port]));
    // Counted from here: one kill trial corrupted a checkpoint too.
    const logStart = bridgeLog.length;
    const said = () => bridgeLog.slice(logStart).join("");
    const repaired = () => said().split("repaired an unreadable checkpoint").length - 1;
    const timings: string[] = [];

    // 1. Truncated to 0 bytes under a running bridge; the next change of the group heals it.
    //    (Not while an engine runs: it would write a whole checkpoint at its end and heal it.)
    await converged();
    await idle();
    const ports = portsOf();
    fs.truncateSync(checkpoint, 0);
    let t0 = Date.now();
    assert.equal(kubectlApply(kc(), claim("ck-1")).status, 0);
    const ck1 = await waitReady("ck-1");
    timings.push(`0 bytes, running: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    assert.equal(psql("127.0.0.1", ck1.status!.port!).stdout.trim(), "42");
    assert.equal(repaired(), 1);
    assert.match(said(), /"action":"restore"[^\n]*"problem":"the file is empty"/);

    // 2. What the kill trials really hit: the checkpoint's metadata sidecar left empty, which
    //    fails `pulumi stack select` with "failed to load checkpoint: EOF".
    await idle();
    fs.truncateSync(`${checkpoint}.attrs`, 0);
    t0 = Date.now();
    assert.equal(kubectlApply(kc(), claim("ck-0")).status, 0);
    await waitReady("ck-0");
    timings.push(`empty .attrs, running: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    assert.match(said(), /removed unreadable metadata files of the file backend/);

    // 3. Truncated to half while the bridge is down; it heals as the restarted bridge starts.
    await killBridge();
    const text = fs.readFileSync(checkpoint);
    fs.writeFileSync(checkpoint, text.subarray(0, Math.floor(text.length / 2)));
    t0 = Date.now();
    startBridge();
    assert.equal(kubectlApply(kc(), claim("ck-2")).status, 0);
    await waitReady("ck-2");
    timings.push(`half, restart: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    await eventually("the restarted bridge to repair the checkpoint", () => repaired() >= 2, 60_000);

    // 4. No older copy at all: the stack is created anew; every connection keeps its port
    //    (the port allocation is seeded from the paths' status) and its proxy.
    await converged();
    const before = portsOf();
    await killBridge();
    fs.rmSync(`${checkpoint}.bak`, { force: true });
    fs.rmSync(backups, { recursive: true, force: true });
    fs.truncateSync(checkpoint, 0);
    t0 = Date.now();
    startBridge();
    await eventually("the restarted bridge to re-create the stack", () => repaired() >= 3, 60_000);
    assert.match(said(), /"action":"recreate"/);
    await converged();
    timings.push(`0 bytes, no copy, restart: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    assert.deepEqual(portsOf(), before, "every connection kept its port");
    for (const [name, port] of Object.entries(ports))
      assert.equal(before[name], port, `${name} kept its port`);
    // The re-created stack's file is written by its first update, which may finish after the
    // paths (Ready all along, their ports seeded from status) are seen converged.
    const loadable = () => {
      try {
        const healed = JSON.parse(fs.readFileSync(checkpoint, "utf8")) as {
          checkpoint: { latest?: unknown };
        };
        return !!healed.checkpoint.latest;
      } catch {
        return false;
      }
    };
    await eventually("a loadable checkpoint again", loadable, 60_000);
    // The repair is reported on the paths, as Events.
    const reasons = kubectlJson<{ items: { reason: string; involvedObject: { kind: string } }[] }>(kc(), [
      "-n",
      "default",
      "get",
      "events",
    ]).items.filter((e) => e.involvedObject.kind === "NetworkPath");
    assert.ok(reasons.some((e) => e.reason === "CheckpointRestored"));
    assert.ok(reasons.some((e) => e.reason === "CheckpointRecreated"));
    assert.ok(reasons.some((e) => e.reason === "CheckpointRepaired"));
    console.log(`      (healed in ${timings.join("; ")})`);
  });

  it("SIGTERM cancels the engine run in flight and waits for it before exiting: the next bridge finds no lock and no pending operation", async () => {
    const logStart = bridgeLog.length;
    assert.equal(kubectlApply(kc(), claim("term-1")).status, 0);
    await eventually("an engine run of the bridge", () => pulumiChildren().length > 0, 60_000);
    const b = bridge!;
    bridge = undefined;
    const exited = new Promise<void>((r) => b.once("exit", () => r()));
    const t0 = Date.now();
    b.kill("SIGTERM");
    await exited;
    const stopSeconds = (Date.now() - t0) / 1000;
    const restartAt = bridgeLog.length;
    try {
      // The bridge waited for its engine: nothing of it runs on, nothing holds the stack.
      assert.deepEqual(pulumiChildren(), [], "no engine outlives the bridge");
      const said = bridgeLog.slice(logStart).join("");
      assert.match(said, /"msg":"engine runs cancelled"/);
      const locks = path.join(bridgeDir, "state", ".pulumi", "locks", "organization", "klutch-network-paths");
      const held = fs.existsSync(locks)
        ? fs.readdirSync(locks).flatMap((d) =>
            fs
              .readdirSync(path.join(locks, d))
              .filter((f) => f.endsWith(".json"))
              .map((f) => `${d}/${f}: ${fs.readFileSync(path.join(locks, d, f), "utf8").trim()}`),
          )
        : [];
      // What the lock says (its pid and time) and what the bridge said, for a failure to be read.
      assert.deepEqual(
        held,
        [],
        `no stack lock left behind (SIGTERM at ${new Date(t0).toISOString()}); the bridge said:\n${said.slice(-4000)}`,
      );
      // The stop cleared a lock its cancelled CLI left (StackRunner.releaseCancelled): counted here.
      if (/clearing the lock of a cancelled update/.test(said))
        console.log("      (the stopping bridge cleared a lock its cancelled engine run left)");
    } finally {
      // The later tests need a bridge, whatever this one found.
      startBridge();
    }
    const c = await waitReady("term-1");
    assert.equal(psql("127.0.0.1", c.status!.port!).stdout.trim(), "42");
    const after = bridgeLog.slice(restartAt).join("");
    assert.doesNotMatch(after, /clearing the lock of an interrupted update|clearing pending operations/);
    console.log(`      (SIGTERM during an update: bridge exited after ${stopSeconds.toFixed(1)} s)`);
  });

  it("routed (VPC peering) paths report the instance itself after a probe; a dead one is Ready=False until it listens; NOOP is left alone", async () => {
    const routedClaim = (name: string, implementation: string, port: number) =>
      JSON.stringify({
        apiVersion: "klutch.anynines.com/v1",
        kind: "TCPConnection",
        metadata: { name, namespace: ROUTED_NS },
        spec: {
          instanceHost: "127.0.0.1",
          port,
          compositionSelector: { matchLabels: { "klutch.anynines.com/implementation": implementation } },
        },
      });
    type Path = {
      metadata: { finalizers?: string[] };
      spec: { implementation: string; port: number; consumerNamespace?: string };
      status?: {
        hostForConsumer?: string;
        port?: number;
        conditions?: { type: string; status: string; reason: string }[];
      };
    };
    const routedPaths = () =>
      kubectlJson<{ items: Path[] }>(kc(), ["get", "networkpaths"]).items.filter(
        (p) => p.spec.consumerNamespace === ROUTED_NS,
      );
    const pathFor = (port: number, implementation: string) =>
      routedPaths().find((p) => p.spec.port === port && p.spec.implementation === implementation);
    const readyOf = (p: Path | undefined) => p?.status?.conditions?.find((c) => c.type === "Ready");

    // Nothing listens here until the test opens it.
    const deadPort = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    for (const [name, implementation, port] of [
      ["peer-orders", "awsVpcPeering", pg.port],
      ["peer-late", "awsVpcPeering", deadPort],
      ["opted-out", "noop", pg.port],
    ] as const) {
      assert.equal(kubectlApply(kc(), routedClaim(name, implementation, port)).status, 0);
    }

    // A live instance: consumers dial it directly (the peering routes), and psql works there.
    await eventually(
      "the routed path to a live instance to be Ready",
      () => readyOf(pathFor(pg.port, "awsVpcPeering"))?.status === "True",
      180_000,
    );
    const live = pathFor(pg.port, "awsVpcPeering")!;
    assert.deepEqual([live.status?.hostForConsumer, live.status?.port], ["127.0.0.1", pg.port]);
    assert.equal(psql("127.0.0.1", live.status!.port!).stdout.trim(), "42");
    const claimReady = () =>
      kubectlJson<{ items: Claim[] }>(kc(), ["-n", ROUTED_NS, "get", "tcpconnections"]).items.find(
        (c) => c.metadata.name === "peer-orders",
      );
    await eventually(
      "the routed claim to be Ready",
      () => Boolean(claimReady() && isClaimReady(claimReady())),
      60_000,
    );

    // A dead instance: reported, with the probe's reason, and not a reconcile error.
    await eventually(
      "the dead routed path to report its probe",
      () => readyOf(pathFor(deadPort, "awsVpcPeering"))?.reason === "ConnectionRefused",
      120_000,
    );
    const dead = pathFor(deadPort, "awsVpcPeering")!;
    assert.equal(readyOf(dead)?.status, "False");
    assert.equal(dead.status?.conditions?.find((c) => c.type === "Synced")?.status, "True");

    // The instance comes up: the bridge probes again (refresh) and the path turns Ready.
    const late = net.createServer((s) => s.end()).listen(deadPort, "127.0.0.1");
    try {
      await eventually(
        "the late instance to be seen",
        () => readyOf(pathFor(deadPort, "awsVpcPeering"))?.status === "True",
        90_000,
      );
    } finally {
      late.close();
    }

    // NOOP: Crossplane's marker NetworkPath exists, and the bridge never touched it.
    const noop = pathFor(pg.port, "noop");
    assert.ok(noop, "the NOOP marker path");
    assert.equal(noop.status, undefined);
    assert.deepEqual(noop.metadata.finalizers ?? [], []);

    kubectl(kc(), ["-n", ROUTED_NS, "delete", "tcpconnections", "--all", "--wait=true", "--timeout=120s"]);
    await eventually("the routed namespace's paths to be gone", () => routedPaths().length === 0, 120_000);
  });

  it("100 connections in one namespace all become Ready: the group's ports grow past one slot on demand; psql works through them", async () => {
    const MANY = "team-many";
    kubectl(kc(), ["create", "namespace", MANY]);
    const items = Array.from({ length: 100 }, (_, i) => ({
      ...(JSON.parse(claim(`m-${i}`)) as Record<string, unknown>),
      metadata: { name: `m-${i}`, namespace: MANY },
    }));
    const t0 = Date.now();
    assert.equal(kubectlApply(kc(), JSON.stringify({ apiVersion: "v1", kind: "List", items })).status, 0);
    const many = () => kubectlJson<{ items: Claim[] }>(kc(), ["-n", MANY, "get", "tcpconnections"]).items;
    let ready = 0;
    await eventually(
      "all 100 connections to be Ready",
      () => {
        ready = many().filter(isClaimReady).length;
        return ready === 100;
      },
      600_000,
    ).catch((e: Error) => {
      throw new Error(`${e.message} (${ready} Ready)\nbridge log:\n${bridgeLog.slice(-20).join("")}`);
    });
    // Informational only (timings are the benchmark's business: npm run bench:bridge).
    console.log(
      `      (100 connections in one namespace Ready after ${((Date.now() - t0) / 1000).toFixed(1)} s)`,
    );
    const ports = many().map((c) => c.status!.port!);
    assert.equal(new Set(ports).size, 100, "distinct ports");
    // 100 listeners and HAProxy's 2 do not fit one 50-port slot: the group's block grew.
    assert.ok(
      ports.every((p) => p >= proxyRange.from && p <= proxyRange.to),
      `ports within the bridge's range: ${ports.join(",")}`,
    );
    const slots = parseSlots(fs.readFileSync(path.join(bridgeDir, "slots.json"), "utf8"));
    assert.ok(heldSlots(slots[`${MANY}/proxy`]) >= 3, `the group holds 3 slots: ${JSON.stringify(slots)}`);
    try {
      // Each sampled port serves psql.
      for (const port of ports.filter((_, i) => i % 10 === 0)) await psqlAnswers(port);
    } finally {
      // Also after a failure: the next tests start from a control plane without these paths.
      kubectl(kc(), ["-n", MANY, "delete", "tcpconnections", "--all", "--wait=false"]);
      await eventually(
        "the namespace's paths to be gone",
        () =>
          kubectlJson<{ items: { spec: { consumerNamespace?: string } }[] }>(kc(), [
            "get",
            "networkpaths",
          ]).items.every((p) => p.spec.consumerNamespace !== MANY),
        300_000,
      );
    }
  });

  it("a port range too small leaves only the connections that do not fit Ready=False, saying why; the others keep working; raising the range heals them; each outcome is an Event", async () => {
    // A clean slate: this test's bridge has its own state and small slots.
    kubectl(kc(), ["-n", NS, "delete", "tcpconnections", "--all", "--wait=true", "--timeout=180s"]);
    await eventually(
      "the earlier paths to be released",
      () => kubectlJson<{ items: unknown[] }>(kc(), ["get", "networkpaths"]).items.length === 0,
      180_000,
    );
    const stopAt = Date.now();
    await killBridge("SIGTERM");
    console.log(`      (SIGTERM → bridge gone in ${((Date.now() - stopAt) / 1000).toFixed(1)} s)`);
    // 7 ports a group, 2 of them HAProxy's stats and health listeners: room for 5 connections
    // (groups grow on demand, so the cap is what makes the range too small).
    startBridge(["--slot-size", "7", "--max-ports-per-group", "7"], capDir);
    type PathObj = {
      metadata: { name: string };
      spec: { connection: string };
      status?: {
        port?: number;
        conditions?: { type: string; status: string; reason: string; message: string }[];
      };
    };
    const paths = () => kubectlJson<{ items: PathObj[] }>(kc(), ["get", "networkpaths"]).items;
    const claimOf = (name: string) => claims().find((c) => c.metadata.name === name);
    // The claim names its XR; the NetworkPath composed for it names the XR in spec.connection.
    const pathOf = (name: string) =>
      paths().find((p) => p.spec.connection === claimOf(name)?.spec.resourceRef?.name);
    const cond = (p: PathObj | undefined, type: string) =>
      p?.status?.conditions?.find((c) => c.type === type);

    // Five fit: four to PostgreSQL and one whose instance host does not resolve (it gets its
    // port, but HAProxy's checks fail, so it is InstanceUnreachable, not Ready); one whose host is
    // no host name at all is rejected alone.
    for (const n of ["cap-a", "cap-b", "cap-c", "cap-d"])
      assert.equal(kubectlApply(kc(), claim(n)).status, 0);
    assert.equal(kubectlApply(kc(), claim("cap-u", { instanceHost: "nowhere.invalid" })).status, 0);
    assert.equal(kubectlApply(kc(), claim("cap-x", { instanceHost: "not a host!" })).status, 0);
    const first: Record<string, number> = {};
    for (const n of ["cap-a", "cap-b", "cap-c", "cap-d"]) first[n] = (await waitReady(n)).status!.port!;
    await eventually(
      "the connection to an unresolvable host to hold a port and say InstanceUnreachable",
      () =>
        cond(pathOf("cap-u"), "Ready")?.reason === "InstanceUnreachable" &&
        pathOf("cap-u")?.status?.port !== undefined,
      60_000,
    );
    first["cap-u"] = pathOf("cap-u")!.status!.port!;
    assert.match(
      cond(pathOf("cap-u"), "Ready")!.message,
      /nowhere\.invalid:\d+ fail on 1 of 1 HAProxy processes/,
    );
    /** A path's port: the claim's where it is Ready, the path's for the one that never is. */
    const portOf = (n: string) => (n === "cap-u" ? pathOf(n)?.status?.port : claimOf(n)?.status?.port);
    await eventually(
      "the invalid connection to say why",
      () => cond(pathOf("cap-x"), "Ready")?.reason === "InvalidConnection",
      60_000,
    ).catch((e: Error) => {
      const seen = paths().map((p) => [p.metadata.name, p.spec.connection, cond(p, "Ready")]);
      throw new Error(
        `${e.message}\nclaim: ${JSON.stringify(claimOf("cap-x"))}\npaths: ${JSON.stringify(seen)}`,
      );
    });
    assert.match(
      cond(pathOf("cap-x"), "Ready")!.message,
      /spec\.instanceHost "not a host!" is neither a DNS name nor an IP address/,
    );

    // Two more do not fit: only they say so, with what to change.
    assert.equal(kubectlApply(kc(), claim("cap-e")).status, 0);
    assert.equal(kubectlApply(kc(), claim("cap-f")).status, 0);
    await eventually(
      "the connections that do not fit to say so",
      () => ["cap-e", "cap-f"].every((n) => cond(pathOf(n), "Ready")?.reason === "PortRangeExhausted"),
      120_000,
    ).catch((e: Error) => {
      throw new Error(`${e.message}\nbridge log:\n${bridgeLog.slice(-30).join("")}`);
    });
    const exhausted = cond(pathOf("cap-e"), "Ready")!;
    assert.equal(exhausted.status, "False");
    assert.match(
      exhausted.message,
      new RegExp(
        `no port left for this connection: group team-a/proxy has port range ${portBase}-${portBase + 6}, 7 ports`,
      ),
    );
    assert.match(
      exhausted.message,
      /up to --max-ports-per-group: raise that \(or widen --port-range\) so the group can have at least 9 ports/,
    );
    assert.equal(cond(pathOf("cap-e"), "Synced")?.reason, "PortRangeExhausted");
    assert.ok(!isClaimReady(claimOf("cap-e")), "the claim that did not fit is not Ready");
    for (const [n, port] of Object.entries(first)) {
      const c = claimOf(n)!;
      if (n === "cap-u") assert.ok(!isClaimReady(c), "the claim to an unresolvable host is not Ready");
      else assert.ok(isClaimReady(c), `${n} stays Ready`);
      assert.equal(portOf(n), port, `${n} keeps its port`);
      assert.equal(cond(pathOf(n), "Synced")?.status, "True", `${n} stays Synced`);
      if (n !== "cap-u") {
        const r = psql("127.0.0.1", port);
        const listeners = spawnSync("ss", ["-Hltnp", `sport = :${port}`], { encoding: "utf8" }).stdout;
        assert.equal(
          r.stdout.trim(),
          "42",
          `psql through ${n} (port ${port}): ${r.stderr}\nlisteners:\n${listeners}`,
        );
      }
    }

    // Each outcome is an Event on its NetworkPath, read back from the API server.
    const eventsOf = (name: string) =>
      kubectlJson<{ items: { type: string; reason: string; message: string; count?: number }[] }>(kc(), [
        "-n",
        "default",
        "get",
        "events",
        "--field-selector",
        `involvedObject.kind=NetworkPath,involvedObject.name=${pathOf(name)!.metadata.name}`,
      ]).items;
    await eventually(
      "the outcomes' Events",
      () =>
        eventsOf("cap-a").some((e) => e.type === "Normal" && e.reason === "PathReady") &&
        eventsOf("cap-e").some((e) => e.type === "Warning" && e.reason === "PortRangeExhausted") &&
        eventsOf("cap-x").some((e) => e.type === "Warning" && e.reason === "InvalidConnection"),
      30_000,
    );
    assert.match(
      eventsOf("cap-e").find((e) => e.reason === "PortRangeExhausted")!.message,
      /--max-ports-per-group/,
    );

    // Raising the range heals them; nobody's port moves.
    await killBridge("SIGTERM");
    startBridge(["--slot-size", "9", "--max-ports-per-group", "9"], capDir);
    for (const n of ["cap-e", "cap-f"]) {
      const c = await waitReady(n);
      assert.equal(psql("127.0.0.1", c.status!.port!).stdout.trim(), "42", `psql through ${n}`);
    }
    for (const [n, port] of Object.entries(first)) assert.equal(portOf(n), port, `${n} keeps its port`);
    await eventually(
      "the healed path's Event",
      () => eventsOf("cap-e").some((e) => e.reason === "PathReady"),
      30_000,
    );
    kubectl(kc(), ["-n", NS, "delete", "tcpconnections", "--all", "--wait=true", "--timeout=180s"]);
  });

  it("a group blocked by a neighbour grows into free slots elsewhere: its ports span two blocks, nobody's port moves, psql works on each", async () => {
    await killBridge("SIGTERM");
    // 4 slots of 7 ports: team-a takes slot 0, team-many the middle of the rest (slot 2).
    const base = portBase + 100;
    startBridge(
      ["--slot-size", "7", "--port-range", `${base}-${base + 27}`],
      path.join(work, "bridge-split"),
    );
    const OTHER = "team-many";
    kubectlTry(kc(), ["create", "namespace", OTHER]);
    const inNs = (name: string, ns: string) =>
      JSON.stringify({ ...(JSON.parse(claim(name)) as object), metadata: { name, namespace: ns } });
    const otherClaim = () =>
      kubectlJson<{ items: Claim[] }>(kc(), ["-n", OTHER, "get", "tcpconnections"]).items.find(
        (c) => c.metadata.name === "split-other",
      );
    const apply = async (names: string[]) => {
      for (const n of names) assert.equal(kubectlApply(kc(), claim(n)).status, 0);
      const out: Record<string, number> = {};
      for (const n of names) out[n] = (await waitReady(n)).status!.port!;
      return out;
    };
    const name = (i: number) => `split-${i}`;
    const ports = await apply([0, 1, 2, 3, 4].map(name));
    assert.equal(kubectlApply(kc(), inNs("split-other", OTHER)).status, 0);
    await eventually(
      "the other group's claim to be Ready",
      () => Boolean(otherClaim() && isClaimReady(otherClaim())),
      180_000,
    );
    const otherPort = otherClaim()!.status!.port!;
    assert.ok(otherPort >= base + 14 && otherPort <= base + 20, `the other group in slot 2: ${otherPort}`);
    // 12 connections and HAProxy's 2 listeners: slot 1, in place; 17: a further block, slot 3.
    Object.assign(ports, await apply([5, 6, 7, 8, 9, 10, 11].map(name)));
    Object.assign(ports, await apply([12, 13, 14, 15, 16].map(name)));
    const slots = parseSlots(fs.readFileSync(path.join(splitDir, "slots.json"), "utf8"));
    assert.deepEqual(slots[`${NS}/proxy`], [
      { slot: 0, count: 2 },
      { slot: 3, count: 1 },
    ]);
    const now = Object.fromEntries(
      claims()
        .filter((c) => c.metadata.name.startsWith("split-"))
        .map((c) => [c.metadata.name, c.status?.port]),
    );
    for (const [n, port] of Object.entries(ports)) assert.equal(now[n], port, `${n} keeps its port`);
    assert.equal(otherClaim()?.status?.port, otherPort, "the other group's port stays");
    const all = Object.values(ports);
    assert.equal(new Set(all).size, 17, "distinct ports");
    assert.ok(
      all.every((p) => p < base + 14 || p > base + 20),
      `none in the other group's slot: ${all.join(",")}`,
    );
    const far = all.filter((p) => p >= base + 21);
    assert.ok(far.length > 0, `some ports in the further block: ${all.join(",")}`);
    for (const port of [all[0]!, far[0]!, otherPort])
      assert.equal(psql("127.0.0.1", port).stdout.trim(), "42", `psql through port ${port}`);
    kubectl(kc(), ["-n", OTHER, "delete", "tcpconnections", "--all", "--wait=true", "--timeout=180s"]);
    kubectl(kc(), ["-n", NS, "delete", "tcpconnections", "--all", "--wait=true", "--timeout=180s"]);
  });

  it("target kubernetes: each group gets its own TcpProxy, shaped by the environment's settings for its consumer namespace", async () => {
    // Hand the NetworkPaths over from the local-target bridge to a kubernetes-target one.
    kubectl(kc(), ["-n", NS, "delete", "tcpconnections", "--all", "--wait=true", "--timeout=120s"]);
    await eventually(
      "the local-target paths to be released",
      () => kubectlJson<{ items: unknown[] }>(kc(), ["get", "networkpaths"]).items.length === 0,
      120_000,
    );
    await killBridge("SIGTERM");

    // What the environment stack writes for an app cluster "app-k" with a tuned proxy.
    const consumerNs = "cluster-app-k";
    const settings = bridgeSettings(
      environmentSchema.parse({
        environment: "e2e",
        controlPlane: { name: "cp", infrastructure: "local" },
        appClusters: [
          {
            name: "app-k",
            infrastructure: "local",
            networkConnector: {
              implementation: "proxy",
              serviceType: "NodePort",
              portRange: appNodePorts,
              dedicatedCpus: 1,
            },
          },
        ],
      }),
    );
    for (const ns of [consumerNs, "klutch-network", "proxies"]) kubectlTry(kc(), ["create", "namespace", ns]);
    const configMap = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "klutch-bridge-settings", namespace: "klutch-network" },
      data: { "settings.json": renderBridgeSettings(settings) },
    };
    assert.equal(kubectlApply(kc(), JSON.stringify(configMap)).status, 0);
    startBridge(
      [
        "--target",
        "kubernetes",
        "--data-plane-kubeconfig",
        kc(),
        "--data-plane-namespace",
        "proxies",
        "--skip-await",
      ],
      k8sDir,
    );

    const tuned = JSON.stringify({
      apiVersion: "klutch.anynines.com/v1",
      kind: "TCPConnection",
      metadata: { name: "tuned", namespace: consumerNs },
      spec: { instanceHost: "10.50.0.10", port: 5432, enhancements: [{ InstanceType: "PostgreSQL" }] },
    });
    assert.equal(kubectlApply(kc(), tuned).status, 0);
    type Obj = { metadata: { name: string }; spec: any; status?: any; data?: Record<string, string> };
    let path0: Obj | undefined;
    await eventually(
      "the kubernetes-target path to be Ready",
      () => {
        path0 = kubectlJson<{ items: Obj[] }>(kc(), ["get", "networkpaths"]).items[0];
        return (
          path0?.status?.conditions?.some(
            (c: { type: string; status: string }) => c.type === "Ready" && c.status === "True",
          ) ?? false
        );
      },
      180_000,
    ).catch((e: Error) => {
      throw new Error(
        `${e.message}\nlast: ${JSON.stringify(path0?.status)}\nbridge log:\n${bridgeLog.slice(-30).join("")}`,
      );
    });
    const port = path0!.status.port as number;
    assert.ok(
      port >= appNodePorts.from && port <= appNodePorts.to,
      `port ${port} from the app cluster's portRange`,
    );

    const name = "np-cluster-app-k-proxy";
    const deployment = kubectlJson<Obj>(kc(), ["-n", "proxies", "get", "deployment", name]);
    assert.deepEqual(deployment.spec.template.spec.containers[0].resources, {
      requests: { cpu: "1", memory: "256Mi" },
      limits: { cpu: "1", memory: "256Mi" },
    });
    const service = kubectlJson<Obj>(kc(), ["-n", "proxies", "get", "service", name]);
    assert.equal(service.spec.type, "NodePort");
    assert.deepEqual(
      service.spec.ports.map((p: { port: number; nodePort: number }) => [p.port, p.nodePort]),
      [[port, port]],
    );
    const configMapName = deployment.spec.template.spec.volumes[0].configMap.name as string;
    const haproxyCfg = kubectlJson<Obj>(kc(), ["-n", "proxies", "get", "configmap", configMapName]).data![
      "haproxy.cfg"
    ]!;
    assert.match(haproxyCfg, /^ {4}nbthread 1\n {4}busy-polling$/m);
    assert.match(haproxyCfg, new RegExp(`bind 0\\.0\\.0\\.0:${port}\n`));

    // Deleting the connection destroys the group's proxy.
    kubectl(kc(), ["-n", consumerNs, "delete", "tcpconnection", "tuned", "--wait=true", "--timeout=120s"]);
    await eventually(
      "the group's proxy to be destroyed",
      () => kubectlTry(kc(), ["-n", "proxies", "get", "deployment", name]).status !== 0,
      120_000,
    );
    assert.equal(kubectlTry(kc(), ["-n", "proxies", "get", "service", name]).status, 1);
  });

  it("with --leader-elect and the stacks in S3 only the lease holder reconciles; the standby takes over when it dies mid-update, clearing the lock it left, and a stopping leader hands over", async () => {
    await killBridge("SIGTERM");
    kubectlTry(kc(), ["create", "namespace", "klutch-network"]);
    // The groups' Pulumi state in an S3 bucket, as a bridge Deployment keeps it (bridge.state
    // {kind: backend, url: s3://…}); the replicas share the rest of haDir (passphrase, slots).
    const s3 = await startS3Server(s3Port);
    await s3.bucket("klutch-bridge-state");
    const backend = ["--backend", s3.backendUrl("klutch-bridge-state", "ha")];
    const locks = () => s3.keys("klutch-bridge-state", "ha/.pulumi/locks/");
    const ports = haOpsPorts;
    const logs: string[][] = [[], []];
    const replicas = ports.map((port, i) =>
      spawnBridge(
        ["--leader-elect", "--settings", "", ...backend],
        haDir,
        port,
        logs[i]!,
        `bridge-ha-${i}.log`,
        s3.env,
      ),
    );
    const leaderGauge = async (port: number) =>
      /^klutch_bridge_leader (\d)$/m.exec(await metricsText(port))?.[1];
    const holder = () =>
      kubectlJson<{ spec: { holderIdentity?: string } }>(kc(), [
        "-n",
        "klutch-network",
        "get",
        "lease",
        "klutch-bridge",
      ]).spec.holderIdentity;
    const gauges = async () => Promise.all(ports.map(leaderGauge));
    try {
      await eventually(
        "one replica to lead and the other to stand by",
        async () => {
          const g = await gauges();
          return g.includes("1") && g.includes("0");
        },
        60_000,
      );
      const leader = (await gauges()).indexOf("1");
      const standby = 1 - leader;
      const firstHolder = holder();
      assert.ok(firstHolder, "the lease names its holder");

      assert.equal(kubectlApply(kc(), claim("ha-one")).status, 0);
      const one = await waitReady("ha-one");
      assert.equal(psql("127.0.0.1", one.status!.port!).stdout.trim(), "42");
      assert.ok(!logs[standby]!.join("").includes("network paths up"), "the standby ran no engine");

      assert.ok(
        (await s3.keys("klutch-bridge-state", "ha/.pulumi/stacks/")).some((k) => k.endsWith(".json")),
        "the group's stack is in the bucket",
      );

      // The leader dies in the middle of an update, with its engine, as a pod does: the lock the
      // engine took stays in the bucket. The standby waits out the lease (15 s), then leads, and
      // its first run of the stack clears the lock (programs/bridge/stack-locks.ts).
      assert.equal(kubectlApply(kc(), claim("ha-two")).status, 0);
      // Polled tightly: the update holds its lock for a few seconds only.
      const lockDeadline = Date.now() + 60_000;
      while ((await locks()).length === 0) {
        if (Date.now() > lockDeadline) throw new Error("the leader's update never held the stack's lock");
        await new Promise((r) => setTimeout(r, 50));
      }
      const leaderPid = replicas[leader]!.pid!;
      for (const pid of [leaderPid, ...descendants(leaderPid)]) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // ended meanwhile
        }
      }
      assert.ok((await locks()).length > 0, "the killed update's lock is left in the bucket");
      const two = await waitReady("ha-two", 120_000);
      await eventually("no lock left in the bucket", async () => (await locks()).length === 0, 30_000).catch(
        async (e: Error) => {
          // Which lock stays, who wrote it (pid, time) and which engine runs are alive, to be read.
          const held = await Promise.all(
            (await locks()).map(async (k) => `${k}: ${await s3.read("klutch-bridge-state", k)}`),
          );
          const engines = pgrep("exec-kind auto.inline.* --stack np-").map((pid) => {
            const stat = fs.existsSync(`/proc/${pid}/stat`)
              ? fs.readFileSync(`/proc/${pid}/stat`, "utf8")
              : "";
            return `${pid} (parent ${stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1] ?? "gone"})`;
          });
          throw new Error(`${e.message}\nlocks:\n${held.join("\n")}\nengine runs: ${engines.join(", ")}`);
        },
      );
      assert.match(logs[standby]!.join(""), /cleared any lock an earlier leader left/);
      assert.equal(psql("127.0.0.1", two.status!.port!).stdout.trim(), "42");
      assert.equal(await leaderGauge(ports[standby]!), "1");
      assert.notEqual(holder(), firstHolder);
      assert.equal(
        psql("127.0.0.1", one.status!.port!).stdout.trim(),
        "42",
        "the first path survived the handover",
      );

      kubectl(kc(), [
        "-n",
        NS,
        "delete",
        "tcpconnections",
        "ha-one",
        "ha-two",
        "--wait=true",
        "--timeout=120s",
      ]);
      // A leader told to stop releases the lease, so a successor need not wait it out.
      const exited = new Promise((r) => replicas[standby]!.once("exit", r));
      replicas[standby]!.kill("SIGTERM");
      await exited;
      assert.equal(holder() ?? "", "");

      // A leader whose renewals hang (the API server frozen, not gone) stops by its own clock,
      // before the lease could pass to anyone else.
      const lastLog: string[] = [];
      const last = spawnBridge(
        ["--leader-elect", "--settings", ""],
        haDir,
        ports[0]!,
        lastLog,
        "bridge-ha-2.log",
      );
      replicas.push(last);
      logs.push(lastLog);
      await eventually(
        "the new replica to lead at once",
        async () => (await leaderGauge(ports[0]!)) === "1",
        30_000,
      );
      const lastExit = new Promise<number | null>((r) => last.once("exit", (code) => r(code)));
      const apiServer = await apiServerPid();
      process.kill(apiServer, "SIGSTOP");
      const frozenAt = Date.now();
      let code: number | null;
      try {
        code = await Promise.race([lastExit, new Promise<null>((r) => setTimeout(() => r(null), 14_000))]);
      } finally {
        process.kill(apiServer, "SIGCONT");
      }
      assert.equal(code, 1, "the leader exited on its own while the API server was frozen");
      assert.match(lastLog.join(""), /lost the lease; stopping/);
      const frozenFor = Date.now() - frozenAt;
      assert.ok(frozenFor < 14_000);
      console.log(`      (the leader exited ${(frozenFor / 1000).toFixed(1)} s after the API server froze)`);
    } catch (e) {
      // What each replica said is the only way to tell a stuck election from a crashed one.
      const tails = logs.map((l, i) => `--- replica ${i}:\n${l.join("").split("\n").slice(-15).join("\n")}`);
      (e as Error).message += `\n${tails.join("\n")}`;
      throw e;
    } finally {
      for (const r of replicas) if (r.exitCode === null && r.signalCode === null) r.kill("SIGKILL");
      await s3.stop();
    }
  });
});
