// `npm run clusters -- up [--stack local] [--clusters a,b,c] [--state-dir DIR] | status | down [--purge]`
//
// Starts, inspects and stops the local clusters (real etcd, kube-apiserver and
// kube-controller-manager on loopback) that the `local` stack deploys to. The processes run
// detached, so they keep running after this command exits; see host/local-clusters/.
import * as path from "node:path";
import { Command } from "commander";
import { LocalCrossplane } from "../../host/local-clusters/crossplane";
import { localClusterRequests } from "../../host/automation/stack-file";
import {
  LocalClusters,
  type ClusterRequest,
  type ClusterInfo,
  type ClusterStatus,
  type ComponentStatus,
} from "../../host/local-clusters";
import { repoRoot, toolchainEnv } from "../../host/automation/toolchain";

const out = (line = "") => process.stdout.write(`${line}\n`);

/** --state-dir, else KLUTCH_LOCAL_DIR (which the Pulumi program honours too), else .klutch/local. */
function stateDir(flag: string | undefined): string {
  return path.resolve(flag ?? process.env.KLUTCH_LOCAL_DIR ?? path.join(repoRoot, ".klutch", "local"));
}

function progress(cluster: string, message: string): void {
  out(`[${cluster}] ${message}`);
}

function table(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  out(line(header));
  rows.forEach((r) => out(line(r)));
}

function upTable(infos: ClusterInfo[]): void {
  table(
    ["CLUSTER", "API SERVER", "NODE", "KUBECONFIG"],
    infos.map((i) => [
      i.name,
      i.apiServerUrl,
      i.node ? `${i.node.nodeName} ${i.node.nodeAddress}` : "-",
      i.kubeconfig,
    ]),
  );
}

function nodeCell(s: ClusterStatus): string {
  if (!s.node) return "-";
  const dead = Object.entries(s.node.components)
    .filter(([, c]) => !c.alive)
    .map(([name]) => name);
  if (dead.length === Object.keys(s.node.components).length) return `${s.node.nodeName ?? "?"} stopped`;
  const procs = dead.length === 0 ? "all running" : `not running: ${dead.join(", ")}`;
  return `${s.node.nodeName ?? "?"} Ready=${s.node.ready.split("\n")[0] ?? ""} (${procs})`;
}

function statusTable(statuses: ClusterStatus[]): void {
  const proc = (s: ComponentStatus) => (s.pid === undefined ? "-" : `${s.pid} ${s.alive ? "alive" : "dead"}`);
  table(
    ["CLUSTER", "ETCD", "APISERVER", "CONTROLLER-MANAGER", "READYZ", "API SERVER", "NODE"],
    statuses.map((s) => [
      s.name,
      proc(s.components.etcd),
      proc(s.components["kube-apiserver"]),
      proc(s.components["kube-controller-manager"]),
      s.readyz.split("\n")[0] ?? "",
      s.apiServerUrl ?? "-",
      nodeCell(s),
    ]),
  );
}

async function main(): Promise<void> {
  const program = new Command("local-clusters")
    .description("Local Kubernetes clusters (etcd, kube-apiserver, kube-controller-manager on 127.0.0.1)")
    .showHelpAfterError();

  program
    .command("up")
    .description("start the clusters that are not running and ready")
    .option("-s, --stack <name>", "stack whose local clusters to start (stacks/Pulumi.<name>.yaml)", "local")
    .option("--clusters <names>", "comma-separated cluster names instead of the stack's")
    .option("--nodes <names>", "with --clusters: the comma-separated clusters that get a node")
    .option("--state-dir <dir>", "where the clusters live (default $KLUTCH_LOCAL_DIR or .klutch/local)")
    .action(async (opts: { stack: string; clusters?: string; nodes?: string; stateDir?: string }) => {
      const list = (value: string) =>
        value
          .split(",")
          .map((n) => n.trim())
          .filter((n) => n.length > 0);
      let requests: ClusterRequest[];
      if (opts.clusters) {
        const withNode = new Set(list(opts.nodes ?? ""));
        requests = list(opts.clusters).map((name) => ({ name, nodes: withNode.has(name) ? 1 : 0 }));
      } else {
        if (opts.nodes)
          throw new Error("--nodes needs --clusters (the stack file says which clusters have nodes)");
        requests = localClusterRequests(opts.stack);
      }
      if (requests.length === 0)
        throw new Error(`stack "${opts.stack}" has no clusters on local infrastructure`);
      const clusters = new LocalClusters(stateDir(opts.stateDir), { env: toolchainEnv(), log: progress });
      const start = Date.now();
      const infos = await clusters.up(requests);
      out(`\n${infos.length} cluster(s) ready in ${Math.round((Date.now() - start) / 100) / 10}s:\n`);
      upTable(infos);
    });

  program
    .command("status")
    .description("show each cluster's processes and whether its API server is ready")
    .option("--state-dir <dir>", "where the clusters live (default $KLUTCH_LOCAL_DIR or .klutch/local)")
    .action(async (opts: { stateDir?: string }) => {
      const clusters = new LocalClusters(stateDir(opts.stateDir));
      const statuses = await clusters.status();
      if (statuses.length === 0) {
        out(`no local clusters under ${clusters.stateDir}`);
        return;
      }
      statusTable(statuses);
      const unhealthy = statuses.filter((s) => !s.healthy).map((s) => s.name);
      if (unhealthy.length > 0) {
        out(`\nnot healthy: ${unhealthy.join(", ")} (run \`up\` to restart them)`);
        process.exitCode = 3;
      }
    });

  program
    .command("down")
    .description("stop every cluster under the state dir")
    .option("--purge", "also delete the state dir (certificates, etcd data, logs)")
    .option("--state-dir <dir>", "where the clusters live (default $KLUTCH_LOCAL_DIR or .klutch/local)")
    .action(async (opts: { purge?: boolean; stateDir?: string }) => {
      const clusters = new LocalClusters(stateDir(opts.stateDir), { log: progress });
      await clusters.down({ purge: opts.purge });
      const left = clusters.leftoverProcesses();
      if (left.length > 0)
        throw new Error(`processes still reference ${clusters.stateDir}: ${left.join(", ")}`);
      out(opts.purge ? `stopped; deleted ${clusters.stateDir}` : "stopped; no cluster process left");
    });

  program
    .command("crossplane")
    .description(
      "run Crossplane core as a local process against a cluster (after `pulumi up` applied its CRDs)",
    )
    .argument("<action>", "start | stop | status")
    .option("--cluster <name>", "the cluster to run it against", "control-plane")
    .option("--state-dir <dir>", "where the clusters live (default $KLUTCH_LOCAL_DIR or .klutch/local)")
    .action(async (action: string, opts: { cluster: string; stateDir?: string }) => {
      const xp = new LocalCrossplane(stateDir(opts.stateDir), opts.cluster, toolchainEnv());
      switch (action) {
        case "start": {
          const pid = await xp.start();
          out(`crossplane core running against ${opts.cluster} (pid ${pid}, log ${xp.logFile})`);
          break;
        }
        case "stop":
          out((await xp.stop()) ? "crossplane stopped" : "crossplane was not running");
          break;
        case "status": {
          const pid = xp.pid();
          out(pid ? `crossplane running (pid ${pid}, log ${xp.logFile})` : "crossplane not running");
          if (!pid) process.exitCode = 3;
          break;
        }
        default:
          throw new Error(`unknown action "${action}": use start, stop or status`);
      }
    });

  await program.parseAsync(process.argv);
}

main().catch((err: unknown) => {
  process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
