import { restoreHostTunables, saveHostTunables } from "./kernel-tunables";
import { API_ENDPOINTS_NAME, apiServerEndpoints } from "./api-endpoints";
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as https from "node:https";
import * as path from "node:path";
import { promisify } from "node:util";
import { buildNodeImages, type BuiltImages } from "../images/catalog";
import { which } from "../host/binaries";
import { SERVICE_CLUSTER_IP_RANGE } from "../host/components";
import { probe, waitForOk, type TlsFiles } from "../host/health";
import { logTail, readLatestRun } from "../host/run-log";
import { renderKubeconfig, writeSecretFile } from "../host/kubeconfig";
import { issueClientCert, type PkiFiles } from "../host/pki";
import {
  commandLine,
  isAlive,
  ownedPid,
  processesReferencing,
  readPidFile,
  spawnDetached,
  stopProcess,
} from "../host/processes";
import type { ProgressLog } from "../host/types";
import type { NodeState } from "../../../lib/local/node-state";
import { currentStubZones } from "../../../lib/instance-names/corefile";
import { containerdHostsToml } from "../registry/config";
import { chooseSlot, DEFAULT_POD_CIDR, nodeLink, type NodeLink } from "./addresses";
import { KUBELET_RACE_RESTARTS, lostRace, restartKubelet } from "./kubelet-restart";
import {
  CLUSTER_DNS_CONFIGMAP_PATH,
  CLUSTER_DNS_DEPLOYMENT,
  CLUSTER_DNS_NAMESPACE,
  clusterDnsAddress,
  withCorefileStubs,
  clusterDnsObjects,
  clusterDnsPaths,
  type AddonObject,
} from "./cluster-dns";
import {
  cniConfig,
  containerdConfig,
  KUBELET_HEALTHZ_PORT,
  kubeletArgs,
  kubeletConfig,
  kubeProxyArgs,
  kubeProxyConfig,
  PROXY_HEALTHZ_PORT,
  SCHEDULER_PORT,
  schedulerArgs,
  type NodeSettings,
} from "./config";
import {
  createCgroupRoot,
  createNodeNetwork,
  deleteNodeNetwork,
  interfaceAddress,
  killCgroupRoot,
  netnsPath,
  unmountUnder,
  usedSlots,
} from "./host";
import {
  NODE_COMPONENTS,
  NODE_PROCESS_NAMES,
  nodeId,
  nodeLayout,
  nodeNames,
  type NodeComponent,
  type NodeLayout,
  type NodeNames,
} from "./layout";

const run = promisify(execFile);

/** The cluster domain of every local cluster (Kubernetes' default). */
export const CLUSTER_DOMAIN = "cluster.local";

interface DeploymentStatus {
  metadata?: { generation?: number };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
  };
}

/** What a cluster asks of its node (`nodes: 1` in the stack; `podCidr` from network.podCidr). */
export interface NodeRequest {
  podCidr?: string;
}

export interface NodeInfo {
  nodeName: string;
  nodeAddress: string;
  hostAddress: string;
  podCidr: string;
  netns: string;
  started: boolean;
  /** Seconds from the start of containerd until the Node was Ready (0 when left alone). */
  readySeconds: number;
  pids: Record<NodeComponent, number>;
  /** Image references by name (pause, haproxy), as pods use them (imagePullPolicy: Never). */
  images: Record<string, string>;
}

export interface NodeStatus {
  nodeName: string | undefined;
  nodeAddress: string | undefined;
  components: Record<NodeComponent, { pid: number | undefined; alive: boolean }>;
  /** "True" when the Node's Ready condition is, else why not. */
  ready: string;
  healthy: boolean;
}

export interface NodeContext {
  env: NodeJS.ProcessEnv;
  log: ProgressLog;
  pki: PkiFiles;
  apiServerPort: number;
  /** Slots other nodes under the same state dir have persisted (taken by concurrent starts too). */
  reservedSlots: Set<number>;
  timeoutMs: number;
  /** The local package registry (host/local-clusters/registry): its loopback port and CA. */
  registry?: { port: number; caCert: string };
}

const seconds = (ms: number) => Math.round(ms / 100) / 10;

/** Whether any kubelet of any local node on this machine still runs. */
/** Whether any kubelet runs on this machine (another local node, e.g. of a test running beside). */
export function otherKubeletRunning(): boolean {
  return fs
    .readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .some((d) => path.basename(commandLine(Number(d))?.[0] ?? "") === "kubelet");
}

/** Whether a process runs one of the node binaries (containerd, shim, kubelet, kube-proxy, kube-scheduler). */
export function isNodeProcess(pid: number): boolean {
  const argv0 = commandLine(pid)?.[0];
  return argv0 !== undefined && NODE_PROCESS_NAMES.includes(path.basename(argv0));
}

/**
 * The node of one local cluster: containerd, kubelet, kube-proxy and kube-scheduler in the
 * node's own network namespace (see docs/local-stack.md, "Nodes"), with its pods in its own cgroup. Like
 * the cluster's processes they run detached, and every method works from disk and /proc.
 */
export class LocalNode {
  readonly layout: NodeLayout;
  readonly id: string;
  readonly names: NodeNames;

  constructor(
    readonly clusterDir: string,
    readonly clusterName: string,
  ) {
    this.layout = nodeLayout(clusterDir);
    this.id = nodeId(clusterDir);
    this.names = nodeNames(this.id);
  }

  get nodeName(): string {
    return `${this.clusterName}-node`;
  }

  /** Whether this cluster ever had a node (its directory exists). */
  exists(): boolean {
    return fs.existsSync(this.layout.dir);
  }

  state(): NodeState | undefined {
    try {
      return JSON.parse(fs.readFileSync(this.layout.stateFile, "utf8")) as NodeState;
    } catch {
      return undefined;
    }
  }

  pid(component: NodeComponent): number | undefined {
    return ownedPid(this.layout.pidFile(component), this.clusterDir);
  }

  /** GET the Node as the admin user: "True" when Ready, else the condition's message. */
  async ready(pki: PkiFiles, apiServerPort: number): Promise<string> {
    const tls = { caCert: pki.caCert, clientCert: pki.adminCert, clientKey: pki.adminKey };
    const body = await probe(`https://127.0.0.1:${apiServerPort}/api/v1/nodes/${this.nodeName}`, tls, 3_000);
    try {
      const node = JSON.parse(body) as {
        status?: { conditions?: { type: string; status: string; message?: string }[] };
      };
      const cond = node.status?.conditions?.find((c) => c.type === "Ready");
      if (!cond) return "no Ready condition yet";
      return cond.status === "True" ? "True" : `${cond.status}: ${cond.message ?? ""}`;
    } catch {
      return body;
    }
  }

  /**
   * Deletes the Node object (and with it, by the garbage collector, its pods' bindings) and the
   * `kubernetes` Service's endpoints it published: a cluster that no longer asks for a node
   * should not list a stale one, nor send pods to its link. True when deleted or already gone.
   */
  async deleteNodeObject(pki: PkiFiles, apiServerPort: number): Promise<boolean> {
    const base = `https://127.0.0.1:${apiServerPort}`;
    const gone = (status: number) => status === 200 || status === 202 || status === 404;
    const results = await Promise.all([
      // The cluster DNS (no node runs it now), its pods with its Deployment.
      ...clusterDnsPaths(SERVICE_CLUSTER_IP_RANGE, CLUSTER_DOMAIN).map((p) =>
        adminCall(pki, "DELETE", `${base}${p}`),
      ),
      adminCall(pki, "DELETE", `${base}/api/v1/nodes/${this.nodeName}`),
      adminCall(pki, "DELETE", `${base}/api/v1/namespaces/default/endpoints/${API_ENDPOINTS_NAME}`),
      adminCall(
        pki,
        "DELETE",
        `${base}/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/${API_ENDPOINTS_NAME}`,
      ),
    ]);
    return results.every((r) => gone(r.status));
  }

  /**
   * Points the `kubernetes` Service at the host end of the node's link (api-endpoints.ts says
   * why the node does it), by server-side apply: the same objects on every `up`.
   */
  async publishApiEndpoints(pki: PkiFiles, apiServerPort: number, hostAddress: string): Promise<void> {
    const { endpoints, endpointSlice } = apiServerEndpoints(hostAddress, apiServerPort);
    const base = `https://127.0.0.1:${apiServerPort}`;
    const apply = "?fieldManager=klutch-local-node&force=true";
    for (const [url, body] of [
      [`${base}/api/v1/namespaces/default/endpoints/${API_ENDPOINTS_NAME}${apply}`, endpoints],
      [
        `${base}/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/${API_ENDPOINTS_NAME}${apply}`,
        endpointSlice,
      ],
    ] as const) {
      const r = await adminCall(pki, "PATCH", url, JSON.stringify(body), "application/apply-patch+yaml");
      if (r.status !== 200 && r.status !== 201)
        throw new Error(`publishing the kubernetes Service's endpoints: HTTP ${r.status} ${r.body}`);
    }
  }

  /** The cluster DNS's objects for this node's cluster (cluster-dns.ts). */
  private clusterDns(image: string): AddonObject[] {
    return clusterDnsObjects({ image, serviceCidr: SERVICE_CLUSTER_IP_RANGE, domain: CLUSTER_DOMAIN });
  }

  /**
   * Applies the cluster DNS (server-side apply, the same objects on every `up`) and waits for
   * its pod to be Ready, so a node that is up resolves Service names.
   */
  async applyClusterDns(
    pki: PkiFiles,
    apiServerPort: number,
    image: string,
    timeoutMs: number,
  ): Promise<void> {
    const base = `https://127.0.0.1:${apiServerPort}`;
    // An API server just started, on a loaded machine, may not answer at once: each call is
    // tried again while it gives no answer or a transient one (answered, below).
    const call = (method: string, path: string, body?: string, type?: string) =>
      answered(
        `the cluster DNS (${method} ${path})`,
        () => adminCall(pki, method, `${base}${path}`, body, type),
        timeoutMs,
      );
    // An environment's instance-names stub zones (components/instance-names/corefile-stub-zones.ts)
    // are kept: a node started again must not take an app cluster's instance names away. A read
    // that fails stops here rather than apply a Corefile without them.
    const existing = await call("GET", CLUSTER_DNS_CONFIGMAP_PATH);
    if (existing.status !== 200 && existing.status !== 404)
      throw new Error(`reading the cluster DNS's Corefile: HTTP ${existing.status} ${existing.body}`);
    const kept =
      existing.status === 200
        ? currentStubZones(
            (JSON.parse(existing.body) as { data?: { Corefile?: string } }).data?.Corefile ?? "",
          )
        : undefined;
    for (const o of this.clusterDns(image)) {
      const body =
        kept?.serverAddress && o.path === CLUSTER_DNS_CONFIGMAP_PATH
          ? withCorefileStubs(o.body, kept)
          : o.body;
      const r = await call(
        "PATCH",
        `${o.path}?fieldManager=klutch-local-node&force=true`,
        JSON.stringify(body),
        "application/apply-patch+yaml",
      );
      if (r.status !== 200 && r.status !== 201)
        throw new Error(`applying the cluster DNS (${o.path}): HTTP ${r.status} ${r.body}`);
    }
    const url = `${base}/apis/apps/v1/namespaces/${CLUSTER_DNS_NAMESPACE}/deployments/${CLUSTER_DNS_DEPLOYMENT}`;
    await waitForOk(
      `the cluster DNS (Deployment ${CLUSTER_DNS_NAMESPACE}/${CLUSTER_DNS_DEPLOYMENT}; see \`kubectl -n ${CLUSTER_DNS_NAMESPACE} describe pods -l k8s-app=kube-dns\`)`,
      async () => {
        const r = await adminCall(pki, "GET", url);
        if (r.status !== 200) return `HTTP ${r.status} ${r.body}`;
        const d = JSON.parse(r.body) as DeploymentStatus;
        const status = d.status;
        const rolledOut =
          (status?.observedGeneration ?? 0) >= (d.metadata?.generation ?? 1) &&
          (status?.updatedReplicas ?? 0) >= 1 &&
          (status?.readyReplicas ?? 0) >= 1 &&
          (status?.replicas ?? 0) === (status?.updatedReplicas ?? 0);
        return rolledOut ? "ok" : JSON.stringify(status ?? {});
      },
      { timeoutMs, intervalMs: 500 },
    );
  }

  /** All four processes are ours and alive, the kubelet is healthy and the Node Ready. */
  async isHealthy(pki: PkiFiles, apiServerPort: number): Promise<boolean> {
    if (!NODE_COMPONENTS.every((c) => this.pid(c) !== undefined)) return false;
    const state = this.state();
    if (!state || state.apiServerPort !== apiServerPort || !fs.existsSync(netnsPath(this.names)))
      return false;
    const link = nodeLink(state.slot);
    if (
      (await probe(`http://${link.nodeAddress}:${KUBELET_HEALTHZ_PORT}/healthz`, undefined, 3_000)) !== "ok"
    )
      return false;
    return (await this.ready(pki, apiServerPort)) === "True";
  }

  /**
   * Makes the node healthy: leaves it alone when it is (and was started with the same
   * settings and images), otherwise stops whatever is left of it (pods included) and starts it
   * afresh. Pods come back as the kubelet recreates them from the API server's objects.
   */
  async up(request: NodeRequest, ctx: NodeContext): Promise<NodeInfo> {
    const log = (m: string) => ctx.log(this.clusterName, `node: ${m}`);
    const env = nodeEnv(ctx.env);
    const podCidr = request.podCidr ?? DEFAULT_POD_CIDR;
    const imageStart = Date.now();
    const images = await buildNodeImages(env);
    const built = Object.values(images).filter((i) => i.built).length;
    if (built > 0) log(`built ${built} image(s) in ${seconds(Date.now() - imageStart)}s`);
    const refs = Object.fromEntries(Object.entries(images).map(([k, v]) => [k, v.reference]));

    const old = this.state();
    const same =
      old !== undefined &&
      old.podCidr === podCidr &&
      JSON.stringify(old.images) === JSON.stringify(refs) &&
      old.apiServerPort === ctx.apiServerPort &&
      old.registry === registryAddress(nodeLink(old.slot), ctx.registry);
    if (same && (await this.isHealthy(ctx.pki, ctx.apiServerPort))) {
      ctx.reservedSlots.add(old.slot);
      // An image deleted from containerd (`ctr images rm`) comes back without a restart.
      await this.importImages(env, images);
      await this.publishApiEndpoints(ctx.pki, ctx.apiServerPort, nodeLink(old.slot).hostAddress);
      await this.applyClusterDns(ctx.pki, ctx.apiServerPort, images.coredns.reference, ctx.timeoutMs);
      log("already running and Ready: left alone");
      return this.info(nodeLink(old.slot), podCidr, false, 0, refs);
    }

    const stopped = await this.stop();
    if (stopped > 0) log(`stopped ${stopped} process(es) left from an earlier run`);

    const start = Date.now();
    const link = await this.chooseLink(old, ctx.reservedSlots);
    const state: NodeState = {
      slot: link.slot,
      nodeName: this.nodeName,
      podCidr,
      apiServerPort: ctx.apiServerPort,
      images: refs,
      ...(ctx.registry ? { registry: registryAddress(link, ctx.registry) } : {}),
    };
    const settings: NodeSettings = {
      nodeName: this.nodeName,
      nodeAddress: link.nodeAddress,
      hostAddress: link.hostAddress,
      apiServerPort: ctx.apiServerPort,
      podCidr,
      sandboxImage: images.pause.reference,
      caCert: ctx.pki.caCert,
      clusterDns: clusterDnsAddress(SERVICE_CLUSTER_IP_RANGE),
      clusterDomain: CLUSTER_DOMAIN,
      ...(ctx.registry
        ? {
            registry: { address: registryAddress(link, ctx.registry) as string, caCert: ctx.registry.caCert },
          }
        : {}),
    };
    try {
      await this.prepare(state, settings, ctx.pki);
      await createNodeNetwork(
        this.names,
        link,
        ctx.apiServerPort,
        SERVICE_CLUSTER_IP_RANGE,
        ctx.registry?.port,
      );
      createCgroupRoot(this.names.cgroupRoot);
      log(`network namespace ${this.names.netns}, node address ${link.nodeAddress}, pods ${podCidr}`);

      const containerdStart = Date.now();
      await this.startContainerd(env, ctx.timeoutMs);
      const importStart = Date.now();
      const imported = await this.importImages(env, images);
      log(
        `containerd up in ${seconds(importStart - containerdStart)}s, ${imported} image(s) imported in ${seconds(Date.now() - importStart)}s`,
      );
      const kubeletStart = Date.now();

      // The kubelet rewrites some kernel settings on the host (kernel-tunables.ts): keep the originals.
      saveHostTunables();
      const kubelet = this.startKubelet(env, kubeletArgs(this.layout, settings), log);
      await this.waitFor(
        "kubelet",
        kubelet.alive,
        () => probe(`http://${link.nodeAddress}:${KUBELET_HEALTHZ_PORT}/healthz`, undefined, 2_000),
        ctx.timeoutMs,
      );
      const proxy = this.start(env, "kube-proxy", kubeProxyArgs(this.layout));
      const scheduler = this.start(env, "kube-scheduler", schedulerArgs(this.layout, settings));
      const insecure: TlsFiles = { insecure: true };
      await Promise.all([
        this.waitFor(
          "kube-scheduler",
          () => isAlive(scheduler),
          () => probe(`https://${link.nodeAddress}:${SCHEDULER_PORT}/healthz`, insecure, 2_000),
          ctx.timeoutMs,
        ),
        this.waitFor(
          "kube-proxy",
          () => isAlive(proxy),
          () =>
            probe(`http://${link.nodeAddress}:${PROXY_HEALTHZ_PORT}/healthz`, undefined, 2_000).then(
              okIfJson,
            ),
          ctx.timeoutMs,
        ),
        this.waitFor(
          "kubelet",
          kubelet.alive,
          () => this.ready(ctx.pki, ctx.apiServerPort).then(trueIsOk),
          ctx.timeoutMs,
        ),
      ]);
      log(
        `kubelet, kube-proxy and kube-scheduler healthy, node Ready in ${seconds(Date.now() - kubeletStart)}s`,
      );
      await this.publishApiEndpoints(ctx.pki, ctx.apiServerPort, link.hostAddress);
      const dnsStart = Date.now();
      await this.applyClusterDns(ctx.pki, ctx.apiServerPort, images.coredns.reference, ctx.timeoutMs);
      log(
        `cluster DNS ${clusterDnsAddress(SERVICE_CLUSTER_IP_RANGE)} Ready in ${seconds(Date.now() - dnsStart)}s`,
      );
    } catch (err) {
      await this.stop();
      throw err;
    }
    const readySeconds = seconds(Date.now() - start);
    log(`${this.nodeName} Ready in ${readySeconds}s`);
    return this.info(link, podCidr, true, readySeconds, refs);
  }

  /** A free /30: the persisted one when nothing else on the host took it meanwhile. */
  private async chooseLink(old: NodeState | undefined, reserved: Set<number>): Promise<NodeLink> {
    const used = await usedSlots();
    for (const slot of reserved) used.add(slot);
    const slot = old !== undefined && !used.has(old.slot) ? old.slot : chooseSlot(this.id, used);
    reserved.add(slot);
    return nodeLink(slot);
  }

  /** Certificates, kubeconfigs and config files; containerd's runtime state starts empty. */
  private async prepare(state: NodeState, s: NodeSettings, pki: PkiFiles): Promise<void> {
    const l = this.layout;
    for (const dir of [
      l.dir,
      l.cniConfDir,
      l.cniIpamDir,
      l.kubeletRoot,
      l.podLogsDir,
      path.dirname(l.containerdConfig),
    ])
      fs.mkdirSync(dir, { recursive: true });
    // Nothing of the node runs now (stop() came first): the task state, runc's state and the
    // pod address leases of the old processes are stale; images and metadata in root stay.
    fs.rmSync(l.containerdState, { recursive: true, force: true });
    fs.rmSync(l.cniIpamDir, { recursive: true, force: true });
    fs.mkdirSync(l.cniIpamDir, { recursive: true });

    const server = `https://${s.hostAddress}:${s.apiServerPort}`;
    const identities: [string, string, string][] = [
      // The Node authorizer knows a kubelet by this name and group.
      ["kubelet", `/O=system:nodes/CN=system:node:${s.nodeName}`, l.kubeletKubeconfig],
      ["kube-proxy", "/CN=system:kube-proxy", l.proxyKubeconfig],
      ["kube-scheduler", "/CN=system:kube-scheduler", l.schedulerKubeconfig],
    ];
    for (const [base, subject, kubeconfig] of identities) {
      const out = path.join(l.pkiDir, base);
      const subjectFile = `${out}.subject`;
      const current = fs.existsSync(subjectFile) ? fs.readFileSync(subjectFile, "utf8") : "";
      // Issued once per CA (a re-created cluster has a new one) and subject.
      const caStamp = `${subject}\n${fs.statSync(pki.caCert).mtimeMs}`;
      if (current !== caStamp || !fs.existsSync(`${out}.crt`)) {
        await issueClientCert(path.dirname(pki.caCert), out, subject);
        fs.writeFileSync(subjectFile, caStamp);
      }
      writeSecretFile(
        kubeconfig,
        renderKubeconfig({
          name: this.clusterName,
          user: base,
          server,
          caCertFile: pki.caCert,
          clientCertFile: `${out}.crt`,
          clientKeyFile: `${out}.key`,
          // The API server's cert names loopback and `kubernetes`, not the host end of the link.
          tlsServerName: "kubernetes",
        }),
      );
    }
    fs.writeFileSync(l.containerdConfig, containerdConfig(l, s));
    fs.rmSync(l.registryHostsDir, { recursive: true, force: true });
    if (s.registry) {
      const hostDir = path.join(l.registryHostsDir, s.registry.address);
      fs.mkdirSync(hostDir, { recursive: true });
      fs.writeFileSync(
        path.join(hostDir, "hosts.toml"),
        containerdHostsToml(s.registry.address, s.registry.caCert),
      );
    }
    fs.writeFileSync(path.join(l.cniConfDir, "10-klutch.conflist"), cniConfig(l, s));
    fs.writeFileSync(l.kubeletConfig, kubeletConfig(l, this.names, s));
    fs.writeFileSync(l.proxyConfig, kubeProxyConfig(l, s));
    fs.writeFileSync(l.stateFile, `${JSON.stringify(state, null, 2)}\n`);
  }

  private async startContainerd(env: NodeJS.ProcessEnv, timeoutMs: number): Promise<void> {
    const pid = this.start(env, "containerd", [
      "--config",
      this.layout.containerdConfig,
      "--log-level",
      "warn",
    ]);
    await this.waitFor(
      "containerd",
      () => isAlive(pid),
      () => this.ctr(env, ["version"]).then(() => "ok", errorText),
      timeoutMs,
    );
  }

  private async ctr(env: NodeJS.ProcessEnv, args: string[]): Promise<string> {
    const ctr = which("ctr", env) ?? "ctr";
    const { stdout } = await run(
      ctr,
      ["--address", this.layout.containerdSocket, "--namespace", "k8s.io", ...args],
      {
        env,
        timeout: 120_000,
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    return stdout;
  }

  /**
   * Imports an OCI archive into the node's containerd (`ctr images import --base-name
   * <repository> --digests`): the names the archive gives under `repository`, and
   * `<repository>@<manifest digest>`, the name a pod that pins the digest is resolved by (the CRI
   * looks images up by name; nothing is pulled here). Returns the names containerd then holds
   * under `repository`.
   */
  async importArchive(archive: string, repository: string, env: NodeJS.ProcessEnv): Promise<string[]> {
    await this.ctr(env, ["images", "import", "--base-name", repository, "--digests", archive]);
    return (await this.ctr(env, ["images", "list", "--quiet"]))
      .split("\n")
      .map((l) => l.trim())
      .filter((name) => name.startsWith(`${repository}:`) || name.startsWith(`${repository}@`));
  }

  /**
   * Imports the images containerd does not hold yet (they stay in its root across restarts);
   * returns how many it imported.
   */
  private async importImages(env: NodeJS.ProcessEnv, images: BuiltImages): Promise<number> {
    const have = new Set(
      (await this.ctr(env, ["images", "list", "--quiet"])).split("\n").map((l) => l.trim()),
    );
    let imported = 0;
    for (const image of Object.values(images)) {
      if (have.has(image.reference)) continue;
      // Content only: the CRI plugin unpacks an image into the snapshotter when a pod first
      // uses it (containerd's pkg/cri/opts/container.go WithNewSnapshot unpacks on a missing
      // snapshot and retries), so a node never unpacks the images none of its pods run, such as
      // the bridge's 473 MiB on an app cluster. A node's start: containerd 6.0 CPU-s against
      // 9.6, images imported in 9.8 s against 13.1 s (containerd 1.6.20, 2026-11-29).
      await this.ctr(env, ["images", "import", "--no-unpack", image.archive]);
      imported++;
    }
    return imported;
  }

  /**
   * Stops the node and removes what it made on the host: kubelet, kube-proxy and scheduler,
   * then every pod process (by cgroup), the shims, containerd, the mounts under the node's
   * directory, its network namespace, nft table and cgroups. Returns how many processes
   * were stopped.
   */
  async stop(): Promise<number> {
    let stopped = 0;
    for (const c of ["kube-scheduler", "kube-proxy", "kubelet"] as const) {
      const pid = this.pid(c);
      if (pid !== undefined) {
        await stopProcess(pid);
        stopped++;
      }
    }
    stopped += await killCgroupRoot(this.names.cgroupRoot);
    // Shims name containerd's socket (under the node's dir) in their argv.
    const leftovers = () => processesReferencing(this.layout.dir).filter(isNodeProcess);
    for (const pid of leftovers().filter((p) =>
      path.basename(commandLine(p)?.[0] ?? "").startsWith("containerd-shim"),
    )) {
      await stopProcess(pid, 1_000);
      stopped++;
    }
    const containerd = this.pid("containerd");
    if (containerd !== undefined) {
      await stopProcess(containerd);
      stopped++;
    }
    for (const pid of leftovers()) {
      await stopProcess(pid, 2_000);
      stopped++;
    }
    for (const c of NODE_COMPONENTS) fs.rmSync(this.layout.pidFile(c), { force: true });
    if (fs.existsSync(this.layout.dir)) await unmountUnder(this.layout.dir);
    removeContainerLogLinks(this.layout.podLogsDir);
    removeCniCache(this.layout.dir);
    await deleteNodeNetwork(this.names);
    // The last node on this machine gives the host its kernel settings back.
    if (!otherKubeletRunning()) restoreHostTunables();
    return stopped;
  }

  async status(pki: PkiFiles, apiServerPort: number | undefined): Promise<NodeStatus> {
    const components = {} as NodeStatus["components"];
    for (const c of NODE_COMPONENTS) {
      const pid = this.pid(c);
      components[c] = { pid: pid ?? readPidFile(this.layout.pidFile(c)), alive: pid !== undefined };
    }
    const state = this.state();
    const ready = apiServerPort === undefined ? "API server unknown" : await this.ready(pki, apiServerPort);
    return {
      nodeName: state?.nodeName,
      nodeAddress: state ? nodeLink(state.slot).nodeAddress : undefined,
      components,
      ready,
      healthy: ready === "True" && NODE_COMPONENTS.every((c) => components[c].alive),
    };
  }

  /** The host end of the node's link, if the node's network exists now. */
  async hostAddress(): Promise<string | undefined> {
    return interfaceAddress(this.names.hostInterface);
  }

  /**
   * Starts the kubelet, and starts it again when it exits having lost the race for the
   * machine-wide device-plugin socket to another node's kubelet (kubelet-restart.ts).
   */
  private startKubelet(
    env: NodeJS.ProcessEnv,
    args: string[],
    log: (message: string) => void,
  ): { alive: () => boolean } {
    let pid = this.start(env, "kubelet", args);
    let restarts = 0;
    return {
      alive: () => {
        if (isAlive(pid)) return true;
        const latestRun = readLatestRun(this.layout.logFile("kubelet"));
        if (!restartKubelet(latestRun, restarts)) return false;
        restarts += 1;
        log(
          `kubelet exited: ${lostRace(latestRun)}; starting it again (${restarts}/${KUBELET_RACE_RESTARTS})`,
        );
        pid = this.start(env, "kubelet", args);
        return true;
      },
    };
  }

  private start(env: NodeJS.ProcessEnv, component: NodeComponent, args: string[]): number {
    const binary = which(component, env);
    if (!binary) {
      throw new Error(
        `${component} not found: run \`bash host/scripts/setup.sh\` (containerd is a Debian package, the rest the toolchain builds)`,
      );
    }
    // nsenter enters only the network namespace and then execs the component (same pid): the
    // mount namespace stays the host's, so the volumes the kubelet mounts are the ones
    // containerd and runc see.
    return spawnDetached({
      binary: which("nsenter", env) ?? "nsenter",
      args: [`--net=${netnsPath(this.names)}`, "--", binary, ...args],
      env,
      cwd: this.layout.dir,
      logFile: this.layout.logFile(component),
      pidFile: this.layout.pidFile(component),
    });
  }

  /**
   * Polls a component's health check; fails early once `alive` says it exited (a function, not
   * a pid: the kubelet's is restarted under a new pid), pointing at its log either way.
   */
  private async waitFor(
    component: NodeComponent,
    alive: () => boolean,
    attempt: () => Promise<string>,
    timeoutMs: number,
  ) {
    const logFile = this.layout.logFile(component);
    try {
      await waitForOk(`${component} of ${this.nodeName}`, attempt, {
        timeoutMs,
        intervalMs: 500,
        abort: () => (alive() ? undefined : "exited during start-up"),
      });
    } catch (err) {
      throw new Error(`${(err as Error).message}\n  log: ${logFile}\n${logTail(logFile)}`);
    }
  }

  private info(
    link: NodeLink,
    podCidr: string,
    started: boolean,
    readySeconds: number,
    images: Record<string, string>,
  ): NodeInfo {
    const pids = {} as NodeInfo["pids"];
    for (const c of NODE_COMPONENTS) pids[c] = this.pid(c) ?? 0;
    return {
      nodeName: this.nodeName,
      nodeAddress: link.nodeAddress,
      hostAddress: link.hostAddress,
      podCidr,
      netns: this.names.netns,
      started,
      readySeconds,
      pids,
      images,
    };
  }
}

/**
 * The kubelet links every container's log into /var/log/containers (a fixed path, not
 * configurable) and removes the links only while it runs: drop the ones into this node's logs.
 */
function removeContainerLogLinks(podLogsDir: string, dir = "/var/log/containers"): void {
  removeEntries(dir, (link) => fs.readlinkSync(link).startsWith(`${podLogsDir}/`));
}

/**
 * containerd's CNI library caches each pod's network result in /var/lib/cni/results (fixed in
 * containerd 1.6) and drops an entry only on a clean teardown, which pods killed by `down`
 * never get: drop the entries whose pod network namespace was under this node's directory.
 */
function removeCniCache(nodeDir: string, dir = "/var/lib/cni/results"): void {
  removeEntries(dir, (file) => fs.readFileSync(file, "utf8").includes(`"${nodeDir}/`));
}

/** Removes the entries of a machine-wide folder that belong to this node; gone or odd entries are skipped. */
function removeEntries(dir: string, ours: (file: string) => boolean): void {
  let entries: string[];
  try {
    entries = fs.readdirSync(dir);
  } catch {
    return;
  }
  for (const entry of entries) {
    const file = path.join(dir, entry);
    try {
      if (ours(file)) fs.rmSync(file, { force: true });
    } catch {
      // not a link, not readable, or gone meanwhile
    }
  }
}

/** One request to the API server as the cluster's admin; never throws (status 0: no answer). */
/**
 * A call's answer once the API server gives one: no answer (HTTP 0: refused, or the 5 s timeout),
 * 429 and 5xx are tried again every half second until `timeoutMs`.
 */
async function answered(
  what: string,
  attempt: () => Promise<{ status: number; body: string }>,
  timeoutMs: number,
): Promise<{ status: number; body: string }> {
  let last = { status: 0, body: "" };
  await waitForOk(
    what,
    async () => {
      last = await attempt();
      const transient = last.status === 0 || last.status === 429 || last.status >= 500;
      return transient ? `HTTP ${last.status} ${last.body}` : "ok";
    },
    { timeoutMs, intervalMs: 500 },
  );
  return last;
}

function adminCall(
  pki: PkiFiles,
  method: string,
  url: string,
  body?: string,
  contentType?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const req = https.request(
      url,
      {
        method,
        ca: fs.readFileSync(pki.caCert),
        cert: fs.readFileSync(pki.adminCert),
        key: fs.readFileSync(pki.adminKey),
        timeout: 5_000,
        agent: false,
        headers: contentType ? { "content-type": contentType } : {},
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (text += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", (e) => resolve({ status: 0, body: e.message }));
    req.end(body);
  });
}

/** The node's processes need /usr/sbin on PATH: runc, iptables (portmap), nft, conntrack. */
function nodeEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, PATH: `${env.PATH ?? ""}:/usr/sbin:/sbin:/usr/bin:/bin` };
}

const errorText = (err: unknown) => ((err as { stderr?: string }).stderr ?? (err as Error).message).trim();
const trueIsOk = (answer: string) => (answer === "True" ? "ok" : `Node not Ready: ${answer}`);
// kube-proxy's /healthz answers 200 with a JSON body once its rules are in sync.
const okIfJson = (answer: string) => (answer.startsWith("{") ? "ok" : answer);

/** Where the node and its pods reach the local registry: its port at their link's host end. */
function registryAddress(link: NodeLink, registry: NodeContext["registry"]): string | undefined {
  return registry ? `${link.hostAddress}:${registry.port}` : undefined;
}
