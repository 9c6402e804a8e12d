import * as fs from "node:fs";
import * as path from "node:path";
import type { Binaries } from "./host/binaries";
import { apiServerArgs, controllerManagerArgs, etcdArgs } from "./host/components";
import { probe, probeEtcd, waitForOk } from "./host/health";
import { logTail } from "./host/run-log";
import { renderKubeconfig, writeSecretFile } from "./host/kubeconfig";
import { readDataVersions, upgradeRefusal, writeDataVersions, type DataVersions } from "./host/data-versions";
import { clusterLayout, type ClusterLayout } from "./host/layout";
import { ensurePki, pkiFiles, type PkiFiles } from "./host/pki";
import { ensurePorts, readPorts, writePorts } from "./host/ports";
import {
  commandLine,
  isAlive,
  ownedPid,
  processesReferencing,
  readPidFile,
  spawnDetached,
  stopProcess,
} from "./host/processes";
import { COMPONENTS, type ClusterPorts, type Component, type ProgressLog } from "./host/types";
import type { ClusterInfo, ClusterStatus } from "./reports";

/** What starting a cluster needs besides its own directory. */
export interface StartContext {
  env: NodeJS.ProcessEnv;
  binaries: Binaries;
  /**
   * The releases those binaries are (data-versions.ts binaryVersions). LocalClusters.up has
   * refused every cluster whose data they may not take before it starts any.
   */
  running: DataVersions;
  log: ProgressLog;
  /** How long kube-apiserver may take to answer /readyz ok. */
  readyTimeoutMs: number;
  /** Every port persisted under the state dir: new allocations avoid them (see ports.ts). */
  reserved: Set<number>;
}

const ETCD_TIMEOUT_MS = 60_000;
const CONTROLLER_MANAGER_TIMEOUT_MS = 60_000;

const seconds = (ms: number) => Math.round(ms / 100) / 10;

/** One local cluster: an etcd, a kube-apiserver and a kube-controller-manager under one directory. */
export class LocalCluster {
  readonly layout: ClusterLayout;

  constructor(
    stateDir: string,
    readonly name: string,
  ) {
    this.layout = clusterLayout(stateDir, name);
  }

  get pki(): PkiFiles {
    return pkiFiles(this.layout.pkiDir);
  }

  ports(): ClusterPorts | undefined {
    return readPorts(this.layout.portsFile);
  }

  /** The live pid of a component, if its pid file names a process of this cluster. */
  pid(component: Component): number | undefined {
    return ownedPid(this.layout.pidFile(component), this.layout.dir);
  }

  /** GET /readyz as the admin user: "ok" or why not. */
  async readyz(timeoutMs = 5_000): Promise<string> {
    const ports = this.ports();
    if (!ports) return "no ports.json (never started)";
    const pki = this.pki;
    if (![pki.caCert, pki.adminCert, pki.adminKey].every((f) => fs.existsSync(f))) return "no certificates";
    const tls = { caCert: pki.caCert, clientCert: pki.adminCert, clientKey: pki.adminKey };
    return probe(`https://127.0.0.1:${ports.apiServer}/readyz`, tls, timeoutMs);
  }

  /** All three processes are ours and alive, and the API server says it is ready. */
  async isHealthy(): Promise<boolean> {
    if (!COMPONENTS.every((c) => this.pid(c) !== undefined)) return false;
    return (await this.readyz(3_000)) === "ok";
  }

  /**
   * Makes the cluster healthy: leaves it alone when it already is, otherwise stops whatever
   * is left of it and starts it afresh on its persisted ports (or new ones where those are
   * taken), with the certificates generated the first time.
   */
  async up(ctx: StartContext): Promise<ClusterInfo> {
    const { layout } = this;
    for (const dir of [layout.dir, layout.logsDir, layout.pidsDir]) fs.mkdirSync(dir, { recursive: true });

    if (await this.isHealthy()) {
      const ports = this.ports() as ClusterPorts;
      this.writeKubeconfigs(ports, this.pki);
      ctx.log(this.name, "already running and ready: left alone");
      return this.info(ports, false, 0);
    }

    const stopped = await this.stop();
    if (stopped > 0) ctx.log(this.name, `stopped ${stopped} process(es) left from an earlier, partial run`);

    if (!fs.existsSync(layout.pkiDir)) ctx.log(this.name, "generating certificates…");
    const pki = await ensurePki(layout.pkiDir, this.name);

    // Ports are only probed free, then bound by the component a moment later; in between an
    // outgoing connection can take one as its ephemeral port. Rare, so one retry with a fresh
    // check (and a new port if it is still taken) settles it.
    for (let attempt = 1; ; attempt++) {
      const ports = await this.preparePorts(ctx, pki);
      try {
        const info = await this.startComponents(ctx, ports, pki);
        writeDataVersions(layout.versionsFile, ctx.running);
        return info;
      } catch (err) {
        // Leave nothing half-started behind; the logs stay for the error message's pointer.
        await this.stop();
        if (attempt >= 2 || !/address already in use/i.test((err as Error).message)) throw err;
        ctx.log(this.name, "a port was taken while starting: checking the ports again and retrying");
      }
    }
  }

  /** Why `running` may not start on this cluster's data (data-versions.ts), if it may not. */
  dataRefusal(running: DataVersions): string | undefined {
    const written = readDataVersions(this.layout.versionsFile, this.layout.etcdDataDir);
    return written && upgradeRefusal(this.name, this.layout.dir, written, running);
  }

  /** The persisted ports, or new ones for those now taken; ports.json and kubeconfigs follow. */
  private async preparePorts(ctx: StartContext, pki: PkiFiles): Promise<ClusterPorts> {
    const { ports, moved } = await ensurePorts(this.ports(), ctx.reserved);
    for (const m of moved) {
      ctx.log(this.name, `port ${m.from} (${m.key}) is taken by another process: moved to ${m.to}`);
    }
    writePorts(this.layout.portsFile, ports);
    if (this.writeKubeconfigs(ports, pki) && moved.some((m) => m.key === "apiServer")) {
      ctx.log(this.name, `kubeconfig rewritten for https://127.0.0.1:${ports.apiServer}`);
    }
    return ports;
  }

  /** etcd, kube-apiserver, kube-controller-manager: each started once the one before is healthy. */
  private async startComponents(ctx: StartContext, ports: ClusterPorts, pki: PkiFiles): Promise<ClusterInfo> {
    const { layout } = this;
    ctx.log(this.name, "starting etcd…");
    const etcd = this.start(ctx, "etcd", etcdArgs(layout, ports));
    await this.waitFor("etcd", etcd, () => probeEtcd(ports.etcdClient, 2_000), ETCD_TIMEOUT_MS);

    ctx.log(this.name, "starting kube-apiserver…");
    const apiStart = Date.now();
    const api = this.start(ctx, "kube-apiserver", apiServerArgs(layout, ports, pki));
    await this.waitFor("kube-apiserver", api, () => this.readyz(2_000), ctx.readyTimeoutMs);
    const readySeconds = seconds(Date.now() - apiStart);
    ctx.log(this.name, `kube-apiserver ready in ${readySeconds}s`);

    ctx.log(this.name, "starting kube-controller-manager…");
    const kcm = this.start(ctx, "kube-controller-manager", controllerManagerArgs(layout, ports, pki));
    const healthz = `https://127.0.0.1:${ports.controllerManager}/healthz`;
    await this.waitFor(
      "kube-controller-manager",
      kcm,
      () => probe(healthz, { caCert: pki.caCert }, 2_000),
      CONTROLLER_MANAGER_TIMEOUT_MS,
    );
    ctx.log(this.name, "kube-controller-manager healthy");
    return this.info(ports, true, readySeconds);
  }

  /**
   * Stops the cluster's processes (controller-manager, API server, etcd: users of a component
   * go before it), removes the pid files, and then kills any component process still
   * referencing this cluster's directory without a pid file. Returns how many were stopped.
   */
  async stop(): Promise<number> {
    let stopped = 0;
    for (const component of [...COMPONENTS].reverse()) {
      const pid = this.pid(component);
      if (pid !== undefined) {
        await stopProcess(pid);
        stopped++;
      }
      fs.rmSync(this.layout.pidFile(component), { force: true });
    }
    for (const pid of this.leftoverComponents()) {
      await stopProcess(pid, 2_000);
      stopped++;
    }
    return stopped;
  }

  /** Our component processes (by binary name) that reference this cluster's directory. */
  leftoverComponents(): number[] {
    return processesReferencing(this.layout.dir).filter((pid) => isComponentProcess(pid));
  }

  async status(): Promise<ClusterStatus> {
    const ports = this.ports();
    const components = {} as ClusterStatus["components"];
    for (const c of COMPONENTS) {
      const pid = this.pid(c);
      components[c] = { pid: pid ?? readPidFile(this.layout.pidFile(c)), alive: pid !== undefined };
    }
    const readyz = await this.readyz(3_000);
    return {
      name: this.name,
      apiServerUrl: ports ? `https://127.0.0.1:${ports.apiServer}` : undefined,
      kubeconfig: this.layout.kubeconfig,
      components,
      readyz,
      healthy: readyz === "ok" && COMPONENTS.every((c) => components[c].alive),
    };
  }

  private start(ctx: StartContext, component: Component, args: string[]): number {
    return spawnDetached({
      binary: ctx.binaries[component],
      args,
      env: ctx.env,
      cwd: this.layout.dir,
      logFile: this.layout.logFile(component),
      pidFile: this.layout.pidFile(component),
    });
  }

  /** Polls a component's health check; fails early if it exits, pointing at its log either way. */
  private async waitFor(
    component: Component,
    pid: number,
    attempt: () => Promise<string>,
    timeoutMs: number,
  ): Promise<void> {
    const logFile = this.layout.logFile(component);
    try {
      await waitForOk(`${component} of cluster ${this.name}`, attempt, {
        timeoutMs,
        abort: () => (isAlive(pid) ? undefined : "exited during start-up"),
      });
    } catch (err) {
      throw new Error(`${(err as Error).message}\n  log: ${logFile}\n${logTail(logFile)}`);
    }
  }

  private writeKubeconfigs(ports: ClusterPorts, pki: PkiFiles): boolean {
    const server = `https://127.0.0.1:${ports.apiServer}`;
    const common = { name: this.name, server, caCertFile: pki.caCert };
    writeSecretFile(
      this.layout.controllerManagerKubeconfig,
      renderKubeconfig({
        ...common,
        user: "controller-manager",
        clientCertFile: pki.controllerManagerCert,
        clientKeyFile: pki.controllerManagerKey,
      }),
    );
    return writeSecretFile(
      this.layout.kubeconfig,
      renderKubeconfig({
        ...common,
        user: "admin",
        clientCertFile: pki.adminCert,
        clientKeyFile: pki.adminKey,
      }),
    );
  }

  private info(ports: ClusterPorts, started: boolean, apiServerReadySeconds: number): ClusterInfo {
    const pids = {} as ClusterInfo["pids"];
    for (const c of COMPONENTS) pids[c] = this.pid(c) ?? 0;
    return {
      name: this.name,
      apiServerUrl: `https://127.0.0.1:${ports.apiServer}`,
      kubeconfig: this.layout.kubeconfig,
      ports,
      started,
      apiServerReadySeconds,
      pids,
    };
  }
}

/** Whether a process runs one of our component binaries (whatever directory it came from). */
export function isComponentProcess(pid: number): boolean {
  const argv0 = commandLine(pid)?.[0];
  return argv0 !== undefined && (COMPONENTS as readonly string[]).includes(path.basename(argv0));
}
