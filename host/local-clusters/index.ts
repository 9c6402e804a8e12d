import * as fs from "node:fs";
import { LocalCrossplane, isCrossplaneProcess } from "./crossplane";
import * as path from "node:path";
import { repoRoot, toolchainEnv } from "../automation/toolchain";
import { imageCacheDir } from "./images/catalog";
import { nodeLink } from "./node/addresses";
import { publishPackages } from "./packages/publish";
import { LocalRegistry } from "./registry/registry";
import { REGISTRY_DIR } from "../../lib/local/packages";
import { resolveBinaries } from "./host/binaries";
import { binaryVersions } from "./host/data-versions";
import { isComponentProcess, LocalCluster } from "./cluster";
import { isValidClusterName, validateClusterName } from "./host/layout";
import { LOCK_FILE, withStateLock } from "./host/lock";
import { allPorts } from "./host/ports";
import { isNodeProcess, LocalNode, type NodeRequest, type NodeStatus } from "./node/node";
import { isAlive, processesReferencing, stopProcess } from "./host/processes";
import type { ProgressLog } from "./host/types";
import type { ClusterInfo, ClusterStatus } from "./reports";

export type { NodeInfo, NodeRequest, NodeStatus } from "./node/node";

/** A cluster to start: its name, and a node (containerd, kubelet, kube-proxy, kube-scheduler) if asked. */
export interface ClusterRequest {
  name: string;
  /** 1 for a node, 0 (default) for an API-only cluster; a running node is stopped then. */
  nodes?: number;
  node?: NodeRequest;
}

export type { ClusterPorts, Component, ComponentStatus, ProgressLog } from "./host/types";
export type { ClusterInfo, ClusterStatus } from "./reports";
export { COMPONENTS } from "./host/types";

export interface LocalClustersOptions {
  /** Environment for the cluster processes, with the binaries on PATH; default toolchainEnv(). */
  env?: NodeJS.ProcessEnv;
  /** Progress messages (per cluster); default: none. */
  log?: ProgressLog;
  /** How long each kube-apiserver may take to become ready; default 180 s. */
  readyTimeoutMs?: number;
  /** How long each node may take to become Ready; default 180 s. */
  nodeTimeoutMs?: number;
}

/**
 * The local clusters under one state dir: each a real etcd, kube-apiserver and
 * kube-controller-manager on 127.0.0.1, running detached so they outlive the command that
 * started them. Every method works from what is on disk and in /proc, so separate commands
 * (`up` now, `status` or `down` later) see the same clusters.
 */
export class LocalClusters {
  readonly stateDir: string;
  private readonly options: LocalClustersOptions;

  constructor(stateDir: string, options: LocalClustersOptions = {}) {
    this.stateDir = path.resolve(stateDir);
    this.options = options;
  }

  /**
   * Starts the named clusters (in parallel) unless they are healthy already, and returns
   * where they answer. Fails, after trying all of them, if any could not be made ready.
   */
  async up(clusters: (string | ClusterRequest)[]): Promise<ClusterInfo[]> {
    const requests = clusters.map((c) => (typeof c === "string" ? { name: c } : c));
    const names = requests.map((r) => r.name);
    if (names.length === 0) throw new Error("no cluster names given");
    for (const r of requests) {
      if (r.nodes !== undefined && r.nodes !== 0 && r.nodes !== 1)
        throw new Error(`${r.name}: nodes must be 0 or 1 (a local cluster has at most one node)`);
    }
    if (new Set(names).size !== names.length)
      throw new Error(`duplicate cluster names in ${names.join(", ")}`);
    names.forEach(validateClusterName);
    const env = this.options.env ?? toolchainEnv();
    const binaries = resolveBinaries(env);
    const running = binaryVersions(binaries, env);
    // Every cluster whose data these releases may not take, in one message, before any starts.
    const refusals = names.flatMap(
      (name) => new LocalCluster(this.stateDir, name).dataRefusal(running) ?? [],
    );
    if (refusals.length > 0) throw new Error(refusals.join("\n"));
    const log = this.options.log ?? (() => undefined);
    const readyTimeoutMs = this.options.readyTimeoutMs ?? 180_000;

    const results = await withStateLock(this.stateDir, async () => {
      // Every port any cluster here has persisted, so a new allocation never takes the port
      // of a cluster that is merely down right now.
      const reserved = new Set<number>();
      for (const cluster of this.clusters()) {
        const ports = cluster.ports();
        if (ports) allPorts(ports).forEach((p) => reserved.add(p));
      }
      const ctx = { env, binaries, running, reserved, log, readyTimeoutMs };
      const reservedSlots = new Set<number>();
      for (const cluster of this.clusters()) {
        const slot = new LocalNode(cluster.layout.dir, cluster.name).state()?.slot;
        if (slot !== undefined && !names.includes(cluster.name)) reservedSlots.add(slot);
      }
      const nodeTimeoutMs = this.options.nodeTimeoutMs ?? 180_000;
      // Nodes pull the project's Crossplane packages from the local registry: its port is
      // fixed before they start (their DNAT and registry host config name it).
      const registry = requests.some((r) => (r.nodes ?? 0) > 0)
        ? new LocalRegistry(this.stateDir, env)
        : undefined;
      const registryRef = registry
        ? { port: await registry.port(reserved), caCert: registry.caCert }
        : undefined;
      const settled = await Promise.allSettled(
        requests.map(async (request) => {
          const cluster = new LocalCluster(this.stateDir, request.name);
          const info = await cluster.up(ctx);
          const node = new LocalNode(cluster.layout.dir, cluster.name);
          if ((request.nodes ?? 0) > 0) {
            info.node = await node.up(request.node ?? {}, {
              env,
              log,
              pki: cluster.pki,
              apiServerPort: info.ports.apiServer,
              reservedSlots,
              timeoutMs: nodeTimeoutMs,
              ...(registryRef ? { registry: registryRef } : {}),
            });
          } else if (node.state() !== undefined) {
            const stopped = await node.stop();
            const deleted = await node.deleteNodeObject(cluster.pki, info.ports.apiServer);
            // Once gone, the node's state is dropped: a later `nodes: 1` starts afresh.
            if (deleted) fs.rmSync(node.layout.stateFile, { force: true });
            if (stopped > 0 || deleted)
              log(request.name, "node: stopped and removed (the cluster no longer asks for one)");
          }
          return info;
        }),
      );
      if (registry && settled.every((r) => r.status === "fulfilled")) {
        await this.publish(registry, reserved, env, (m) => log("registry", m));
      }
      return settled;
    });
    const failures = results.flatMap((r, i) =>
      r.status === "rejected"
        ? [`${names[i]}: ${r.reason instanceof Error ? r.reason.message : String(r.reason)}`]
        : [],
    );
    if (failures.length > 0) {
      throw new Error(
        `${failures.length} of ${names.length} cluster(s) failed to start:\n${failures.join("\n")}`,
      );
    }
    return results.map((r) => (r as PromiseFulfilledResult<ClusterInfo>).value);
  }

  /**
   * Runs the package registry with a certificate for every node's link under this state dir
   * and publishes the project's packages to it.
   */
  private async publish(
    registry: LocalRegistry,
    reserved: Set<number>,
    env: NodeJS.ProcessEnv,
    log: (m: string) => void,
  ): Promise<void> {
    const addresses = this.clusters().flatMap((c) => {
      const slot = new LocalNode(c.layout.dir, c.name).state()?.slot;
      return slot === undefined ? [] : [nodeLink(slot).hostAddress];
    });
    const info = await registry.up(addresses, reserved);
    await publishPackages({
      root: repoRoot,
      cacheDir: imageCacheDir(env),
      registry: info,
      registryDir: registry.dir,
      env,
      log,
    });
  }

  /**
   * Stops every cluster under the state dir and waits until its processes are gone, then
   * kills any component process the /proc scan still finds there. Other processes that merely
   * mention the state dir (a `kubectl --kubeconfig …` in another shell) are reported through
   * the log, not killed. With purge, the state dir is deleted afterwards.
   */
  async down(options: { purge?: boolean } = {}): Promise<void> {
    if (!fs.existsSync(this.stateDir)) return;
    await withStateLock(this.stateDir, () => this.stopAll(options.purge === true));
  }

  private async stopAll(purge: boolean): Promise<void> {
    const log = this.options.log ?? (() => undefined);
    // Crossplane core talks to an API server: stop it before the clusters go.
    for (const cluster of this.clusters()) {
      if (await new LocalCrossplane(this.stateDir, cluster.name, this.options.env ?? process.env).stop()) {
        log(cluster.name, "stopped crossplane");
      }
    }
    // A node's kubelet, kube-proxy and scheduler talk to the API server: they go first.
    await Promise.all(
      this.clusters().map(async (cluster) => {
        const node = new LocalNode(cluster.layout.dir, cluster.name);
        if (!node.exists()) return;
        const stopped = await node.stop();
        if (stopped > 0) log(cluster.name, `node: stopped ${stopped} process(es)`);
      }),
    );
    await Promise.all(
      this.clusters().map(async (cluster) => {
        const stopped = await cluster.stop();
        log(cluster.name, stopped > 0 ? `stopped ${stopped} process(es)` : "not running");
      }),
    );
    if (await new LocalRegistry(this.stateDir, this.options.env ?? process.env).stop())
      log("registry", "stopped the package registry");
    const leftovers = this.leftoverProcesses();
    for (const pid of leftovers.filter(
      (p) => isComponentProcess(p) || isCrossplaneProcess(p) || isNodeProcess(p),
    )) {
      await stopProcess(pid, 2_000);
    }
    const foreign = this.leftoverProcesses();
    if (foreign.length > 0) {
      log(
        "*",
        `processes still referencing ${this.stateDir} (not ours, left running): ${foreign.join(", ")}`,
      );
    }
    if (purge) this.purge();
  }

  /** Status of every cluster found under the state dir. */
  async status(): Promise<ClusterStatus[]> {
    return Promise.all(
      this.clusters().map(async (c) => {
        const status = await c.status();
        const node = new LocalNode(c.layout.dir, c.name);
        if (node.exists() && node.state() !== undefined) {
          status.node = await node.status(c.pki, c.ports()?.apiServer);
          status.healthy = status.healthy && (!anyAlive(status.node) || status.node.healthy);
        }
        return status;
      }),
    );
  }

  /** The node of a cluster under this state dir (whether or not it runs). */
  node(name: string): LocalNode {
    return new LocalNode(new LocalCluster(this.stateDir, name).layout.dir, name);
  }

  kubeconfigPath(name: string): string {
    return new LocalCluster(this.stateDir, name).layout.kubeconfig;
  }

  /** Names of the clusters that have a directory under the state dir. */
  clusterNames(): string[] {
    return this.clusters().map((c) => c.name);
  }

  /** Pids of live processes whose command line references the state dir (this process excepted). */
  leftoverProcesses(): number[] {
    return processesReferencing(this.stateDir).filter(isAlive);
  }

  private clusters(): LocalCluster[] {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(this.stateDir, { withFileTypes: true });
    } catch {
      return [];
    }
    return entries
      .filter(
        (e) =>
          e.isDirectory() && isValidClusterName(e.name) && isClusterDir(path.join(this.stateDir, e.name)),
      )
      .map((e) => new LocalCluster(this.stateDir, e.name))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  // Deletes the state dir only if it holds nothing but cluster directories: a mistyped
  // --state-dir must not take someone's home directory with it.
  private purge(): void {
    if (!fs.existsSync(this.stateDir)) return;
    const strangers = fs
      .readdirSync(this.stateDir, { withFileTypes: true })
      .filter(
        (e) =>
          e.name !== LOCK_FILE &&
          e.name !== REGISTRY_DIR &&
          !(e.isDirectory() && isClusterDir(path.join(this.stateDir, e.name))),
      )
      .map((e) => e.name);
    if (strangers.length > 0) {
      throw new Error(
        `not purging ${this.stateDir}: it holds ${strangers.join(", ")}, which are not local clusters`,
      );
    }
    fs.rmSync(this.stateDir, { recursive: true, force: true });
  }
}

// A node whose processes were all stopped on purpose (`nodes: 0`) does not make its cluster
// unhealthy; one that is half alive does.
function anyAlive(status: NodeStatus): boolean {
  return Object.values(status.components).some((c) => c.alive || c.pid !== undefined);
}

// A cluster dir is one `up` made: it has ports.json, pki/ or pids/.
function isClusterDir(dir: string): boolean {
  return ["ports.json", "pki", "pids"].some((f) => fs.existsSync(path.join(dir, f)));
}
