import { execFile } from "node:child_process";
import { AppsV1Api, KubeConfig } from "@kubernetes/client-node";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { LOCAL_CORE_FLAGS } from "../../lib/crossplane/crossplane-plan";
import { probe } from "./host/health";
import { clusterLayout } from "./host/layout";
import { allocatePort } from "./host/ports";
import { commandLine, isAlive, ownedPid, spawnDetached, stopProcess } from "./host/processes";

const execFileAsync = promisify(execFile);

/**
 * Crossplane core 1.20 (the toolchain's legacy core) as a process on this machine, against one local cluster's API server.
 * Local clusters run no pods, so the Deployment that `pulumi up` creates never starts; this
 * process does its job instead. Webhooks are off (nothing could call back into a process on
 * loopback the way the API server expects a Service), and the package manager cannot pull
 * packages here, so it only reports that; XRDs and compositions work as on a real cluster.
 */
export class LocalCrossplane {
  readonly dir: string;
  private readonly clusterDir: string;
  private readonly kubeconfig: string;

  constructor(
    stateDir: string,
    readonly cluster: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    const layout = clusterLayout(stateDir, cluster);
    this.clusterDir = layout.dir;
    this.kubeconfig = layout.kubeconfig;
    this.dir = path.join(layout.dir, "crossplane");
  }

  private get pidFile() {
    return path.join(this.dir, "crossplane.pid");
  }

  get logFile(): string {
    return path.join(this.dir, "crossplane.log");
  }

  /** The running process, if it is ours. */
  pid(): number | undefined {
    return ownedPid(this.pidFile, this.clusterDir);
  }

  /** Starts Crossplane core unless it already runs; resolves once its health probe answers. */
  async start(timeoutMs = 60_000): Promise<number> {
    const running = this.pid();
    if (running !== undefined) return running;
    // The 1.20 core: a process runs no function pods, so its compositions are Resources mode,
    // which v2 removed (lib/config/crossplane-versions.ts).
    const binary = this.env.KLUTCH_CROSSPLANE_LEGACY;
    if (!binary || !fs.existsSync(binary))
      throw new Error(
        `the Crossplane 1.20 core (KLUTCH_CROSSPLANE_LEGACY: ${binary ?? "unset"}) is not built: run \`bash host/scripts/toolchain.sh build crossplane-legacy\``,
      );
    if (!fs.existsSync(this.kubeconfig))
      throw new Error(`no kubeconfig at ${this.kubeconfig}: run \`npm run clusters -- up\``);
    const pods = await this.chartReplicas();
    if (pods > 0)
      throw new Error(
        `Crossplane already runs on ${this.cluster} as the chart's pods (Deployment crossplane-system/crossplane, ${pods} replica(s)); a process would be a second core reconciling the same objects. The process is for a control plane without a node (crossplane.runLocally)`,
      );
    const tlsDir = path.join(this.dir, "tls-client");
    await ensureClientTls(tlsDir);
    const metricsPort = await allocatePort(new Set());
    const healthPort = await allocatePort(new Set([metricsPort]));
    const pid = spawnDetached({
      binary,
      args: [
        "core",
        "start",
        "--namespace=crossplane-system",
        "--webhook-enabled=false",
        "--enable-ssa-claims",
        // The same flags as the chart's pods on a local node.
        ...LOCAL_CORE_FLAGS,
        `--xpkg-cache-dir=${path.join(this.dir, "xpkg")}`,
        // Every reconcile's decisions (e.g. "Composed resource is not yet ready"), for a hunt.
        ...(this.env.KLUTCH_CROSSPLANE_DEBUG === "1" ? ["--debug"] : []),
        `--metrics-port=${metricsPort}`,
        `--health-probe-port=${healthPort}`,
      ],
      env: {
        ...this.env,
        KUBECONFIG: this.kubeconfig,
        TLS_CLIENT_CERTS_DIR: tlsDir,
        // Nothing leaves this machine: package pulls go to a closed loopback port and fail at
        // once, and the AWS SDK (used for ECR-hosted packages) never probes instance metadata.
        HTTPS_PROXY: "http://127.0.0.1:9",
        HTTP_PROXY: "http://127.0.0.1:9",
        NO_PROXY: "127.0.0.1,localhost",
        AWS_EC2_METADATA_DISABLED: "true",
      },
      cwd: this.dir,
      logFile: this.logFile,
      pidFile: this.pidFile,
    });
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (!isAlive(pid)) throw new Error(`crossplane exited during start; see ${this.logFile}`);
      if ((await probe(`http://127.0.0.1:${healthPort}/healthz`, undefined, 2_000)) === "ok") return pid;
      if (Date.now() > deadline)
        throw new Error(`crossplane not healthy after ${timeoutMs} ms; see ${this.logFile}`);
      await new Promise((r) => setTimeout(r, 300));
    }
  }

  /** Replicas of the chart's core Deployment on this cluster (0 when it is absent). */
  private async chartReplicas(): Promise<number> {
    const config = new KubeConfig();
    config.loadFromFile(this.kubeconfig);
    try {
      const d = await config.makeApiClient(AppsV1Api).readNamespacedDeployment({
        name: "crossplane",
        namespace: "crossplane-system",
      });
      return d.spec?.replicas ?? 1;
    } catch (e) {
      if ((e as { code?: number }).code === 404) return 0;
      throw e;
    }
  }

  async stop(): Promise<boolean> {
    const pid = this.pid();
    if (pid === undefined) return false;
    await stopProcess(pid, 10_000);
    fs.rmSync(this.pidFile, { force: true });
    return true;
  }
}

/** Whether a pid is a local Crossplane core process (for leftover cleanup). */
export function isCrossplaneProcess(pid: number): boolean {
  const argv = commandLine(pid);
  return argv !== undefined && path.basename(argv[0] ?? "") === "crossplane" && argv[1] === "core";
}

/**
 * Crossplane core insists on client TLS material for calling composition functions, which
 * `crossplane core init` would generate into Secrets; a self-signed CA and client pair stand in.
 */
async function ensureClientTls(dir: string): Promise<void> {
  const files = ["ca.crt", "tls.crt", "tls.key"].map((f) => path.join(dir, f));
  if (files.every((f) => fs.existsSync(f))) return;
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const [caCrt, tlsCrt, tlsKey] = files as [string, string, string];
  const caKey = path.join(dir, "ca.key");
  const csr = path.join(dir, "tls.csr");
  const run = (args: string[]) => execFileAsync("openssl", args, { cwd: dir });
  await run(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", caKey]);
  await run([
    "req",
    "-x509",
    "-new",
    "-key",
    caKey,
    "-subj",
    "/CN=local-crossplane-ca",
    "-days",
    "3650",
    "-out",
    caCrt,
  ]);
  await run(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", tlsKey]);
  await run(["req", "-new", "-key", tlsKey, "-subj", "/CN=crossplane", "-out", csr]);
  await run([
    "x509",
    "-req",
    "-in",
    csr,
    "-CA",
    caCrt,
    "-CAkey",
    caKey,
    "-CAcreateserial",
    "-days",
    "3650",
    "-out",
    tlsCrt,
  ]);
  fs.chmodSync(tlsKey, 0o600);
  fs.chmodSync(caKey, 0o600);
}
