import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Command } from "commander";
import { Bridge } from "./controller";
import { controlPlaneKubeconfig } from "./kubeconfig";
import { LeaderElector } from "./leader";
import { jsonLogger } from "./log";
import { logNodeWarnings } from "./node-warnings";
import { INSTANCE_ENV, instanceMarker } from "./orphans";
import { startOpsServer } from "./server";
import { addTargetOptions, targetFromOptions } from "./target-options";
import { bridgeStackEnv } from "./state-dir";
import { BridgeMetrics } from "./metrics";
import { LEADER_LEASE } from "../../lib/bridge/lease";
import { SETTINGS_CONFIGMAP, SETTINGS_NAMESPACE } from "../../lib/bridge/settings";
import { ensureKubernetesPlugin, preparePulumiHome, pulumiEnv } from "../../host/automation/pulumi-runner";
import { repoRoot } from "../../host/automation/toolchain";

const program = addTargetOptions(new Command())
  .name("bridge")
  .description(
    "Realises NetworkPaths (composed by Crossplane for XTCPConnections) with this project's Pulumi code",
  )
  .option(
    "--kubeconfig <file>",
    "kubeconfig of the control plane the NetworkPaths live on (default: KUBECONFIG; in a pod: in-cluster config)",
  )
  .option(
    "--settings <namespace/name>",
    "ConfigMap with the environment's per-consumer settings ('' for none)",
    `${SETTINGS_NAMESPACE}/${SETTINGS_CONFIGMAP}`,
  )
  .option(
    "--leader-elect",
    "run as one of several replicas: only the holder of the lease reconciles (needs a shared --backend)",
  )
  .option(
    "--lease <namespace/name>",
    "the Lease used for leader election",
    `${SETTINGS_NAMESPACE}/${LEADER_LEASE}`,
  )
  .option(
    "--slot-size <n>",
    "ports per slot; a group holds whole slots of the port range (local target)",
    "50",
  )
  .option(
    "--max-ports-per-group <n>",
    "the most ports one group grows to, in whole slots (local target; default: the whole port range)",
  )
  .option("--state-dir <dir>", "workspace, state and proxy files", path.join(repoRoot, ".klutch", "bridge"))
  .option("--backend <url>", "Pulumi backend URL (default: file backend in the state dir)")
  .option("--secrets-provider <url>", "secrets provider of the bridge's stacks (default: passphrase)")
  .option("--concurrency <n>", "groups reconciled at once", "2")
  .option(
    "--node-poll <seconds>",
    "how often the data plane's nodes are listed while a NodePort proxy reports one (target kubernetes)",
    "30",
  )
  .option("--ops-port <port>", "port of /healthz, /readyz and /metrics", "9464")
  .option(
    "--ops-address <ip>",
    "address of /healthz, /readyz and /metrics (0.0.0.0 in a pod, for the kubelet's probes)",
    "127.0.0.1",
  )
  .option("--debug", "debug logs");

function leaseRef(text: string): { namespace: string; name: string } {
  const m = /^([a-z0-9-]{1,63})\/([a-z0-9.-]{1,253})$/.exec(text);
  if (!m) throw new Error(`--lease "${text}" must be NAMESPACE/NAME`);
  return { namespace: m[1] as string, name: m[2] as string };
}

function settingsRef(text: string): { settings?: { namespace: string; name: string } } {
  if (text === "") return {};
  const m = /^([a-z0-9-]{1,63})\/([a-z0-9.-]{1,253})$/.exec(text);
  if (!m) throw new Error(`--settings "${text}" must be NAMESPACE/NAME of a ConfigMap, or '' for none`);
  return { settings: { namespace: m[1] as string, name: m[2] as string } };
}

async function main(): Promise<void> {
  program.parse();
  // Last resort only: every promise the bridge makes is awaited or caught, so anything
  // logged here is a bug to fix at its source; the stack says where it came from. A
  // controller keeps going through it: what failed is retried by its group.
  process.on("unhandledRejection", (reason) => {
    process.stdout.write(
      `${JSON.stringify({
        time: new Date().toISOString(),
        level: "error",
        msg: "unhandled rejection",
        error: String(reason),
        stack: reason instanceof Error ? reason.stack : undefined,
      })}\n`,
    );
  });
  const o = program.opts<Record<string, string | boolean | undefined>>();
  const log = jsonLogger(o.debug ? "debug" : "info");
  // Node.js's own warnings would be plain text amid the JSON lines (programs/bridge/node-warnings.ts).
  logNodeWarnings(log);
  const stateDir = path.resolve(String(o.stateDir));
  fs.mkdirSync(stateDir, { recursive: true });
  const concurrency = Number(o.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new Error("--concurrency must be a whole number >= 1");
  for (const [flag, value] of [
    ["--slot-size", o.slotSize],
    ["--max-ports-per-group", o.maxPortsPerGroup],
  ] as const) {
    if (value !== undefined && !(Number.isInteger(Number(value)) && Number(value) >= 3))
      throw new Error(`${flag} must be a whole number >= 3 (the proxy's two own listeners and a connection)`);
  }
  const target = targetFromOptions(o, stateDir);
  const nodePoll = Number(o.nodePoll);
  if (!(Number.isFinite(nodePoll) && nodePoll >= 1))
    throw new Error(`--node-poll "${String(o.nodePoll)}" must be a number of seconds >= 1`);

  // Secrets in the bridge's stacks (kubeconfigs) need a passphrase; without one given, a
  // random one is made once and kept next to the state, readable by this user only.
  const base = bridgeStackEnv({
    base: process.env,
    stateDir,
    ...(o.backend ? { backend: String(o.backend) } : {}),
    create: true,
  });
  // Marks the engines this bridge runs (and their plugins), so a successor reaps exactly
  // those when this bridge dies (programs/bridge/orphans.ts), never an operator's own pulumi.
  base[INSTANCE_ENV] = instanceMarker();
  const env = pulumiEnv("bridge", base);
  // Every reconcile runs the engine; its automatic log would cost CPU and fill the state volume.
  preparePulumiHome(env);
  // The kubernetes target's program needs the Kubernetes provider plugin in PULUMI_HOME; with
  // automatic plugin downloads off, a fresh PULUMI_HOME would fail every reconcile.
  if (target.kind === "kubernetes") ensureKubernetesPlugin(env);
  process.env.PATH = env.PATH;
  const pulumiEnvVars = Object.fromEntries(
    Object.entries(env).filter((e): e is [string, string] => typeof e[1] === "string"),
  );

  const kubeconfig = controlPlaneKubeconfig(o.kubeconfig as string | undefined, process.env);
  const metrics = new BridgeMetrics();
  const bridge = new Bridge({
    kubeconfig,
    target,
    stateDir,
    pulumiEnv: pulumiEnvVars,
    ...(o.secretsProvider ? { secretsProvider: String(o.secretsProvider) } : {}),
    ...(o.leaderElect ? { leaderElected: true } : {}),
    ...settingsRef(String(o.settings ?? "")),
    concurrency,
    nodePollMs: nodePoll * 1000,
    slotSize: Number(o.slotSize),
    ...(o.maxPortsPerGroup !== undefined ? { maxPortsPerGroup: Number(o.maxPortsPerGroup) } : {}),
    log,
    metrics,
  });
  const elector = o.leaderElect
    ? new LeaderElector({
        kubeconfig,
        ...leaseRef(String(o.lease)),
        identity: `${os.hostname()}-${process.pid}-${crypto.randomBytes(3).toString("hex")}`,
        log,
      })
    : undefined;
  let leading = !elector;
  metrics.setLeader(leading);
  // A standby is alive and well; only a leader's health depends on its watch.
  const server = await startOpsServer(
    Number(o.opsPort),
    metrics,
    () => !leading || bridge.healthy(),
    String(o.opsAddress),
  );
  // Engine runs are cancelled and awaited first, and only then is the lease released: a
  // successor that took over at once must not find this bridge's engines still writing its
  // stacks. Within Kubernetes' default 30 s grace period: 20 s for the engines, 3 s for the lease.
  let stopping = false;
  const shutdown = () => {
    if (stopping) return;
    stopping = true;
    log("info", "stopping");
    server.close();
    void bridge
      .stop(20_000)
      .then(() => {
        const released = elector
          ? elector.release().catch((e: Error) => {
              log("warn", "leader election: could not release the lease; a successor waits it out", {
                error: e.message,
              });
            })
          : Promise.resolve();
        return Promise.race([released, new Promise((r) => setTimeout(r, 3000))]);
      })
      .then(() => process.exit(0));
  };
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
  log("info", "bridge starting", {
    target: target.kind,
    stateDir,
    concurrency,
    opsPort: Number(o.opsPort),
    controlPlane: kubeconfig ?? "in-cluster",
    leaderElection: Boolean(elector),
  });
  if (elector) {
    await elector.run(() => {
      // Another bridge may take over any moment now: stop at once, mid-run or not; the
      // next leader recovers whatever this one left (locks, pending operations, processes).
      metrics.setLeader(false);
      process.exit(1);
    });
    leading = true;
    metrics.setLeader(true);
  }
  await bridge.start();
}

main().catch((e: Error) => {
  process.stderr.write(`bridge: ${e.message}\n`);
  process.exit(1);
});
