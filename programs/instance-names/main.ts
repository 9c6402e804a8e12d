/**
 * The instance-names watcher, as the process beside CoreDNS in the app cluster's names pod: lists
 * and watches the ServiceBinding claims the konnector copies in, and keeps the hosts file CoreDNS's
 * `hosts` plugin serves (in the emptyDir both containers mount) holding each instance's own name
 * at its network path's address. Run as `node /app/programs/instance-names/main.js` in the bridge's
 * image (host/local-clusters/images/bridge-image.ts), or from the checkout with
 * `bash host/scripts/node.sh ts programs/instance-names/main.ts --zone … --hosts-file …`.
 */
import * as dns from "node:dns";
import * as fs from "node:fs";
import * as http from "node:http";
import * as path from "node:path";
import * as k8s from "@kubernetes/client-node";
import { Command } from "commander";
import { isDnsName, normaliseZone } from "../../lib/instance-names/records";
import { jsonLogger } from "../bridge/log";
import { DEFAULT_RESOURCE, claimSource, parseResource } from "./kube-source";
import { InstanceNamesWatcher } from "./watcher";

const collect = (value: string, previous: string[] = []) => [...previous, value];

const program = new Command()
  .name("instance-names")
  .description("Writes the hosts file of the data-service instances' names from the ServiceBinding claims")
  .requiredOption(
    "--zone <zone>",
    "a DNS zone whose names the claims may set (repeatable), e.g. a9s-instances.svc.cluster.local",
    collect,
  )
  .option(
    "--resource <group/version/plural>",
    `the claims' custom resource (repeatable; default ${DEFAULT_RESOURCE})`,
    collect,
  )
  .option("--hosts-file <path>", "the hosts file CoreDNS's hosts plugin reads", "/names/hosts")
  .option("--health-port <n>", "port of /healthz and /readyz", "8090");

/** Replaces the file whole: written beside it, then renamed over it (CoreDNS never reads half of one). */
async function writeAtomically(file: string, text: string): Promise<void> {
  const tmp = `${file}.tmp`;
  await fs.promises.mkdir(path.dirname(file), { recursive: true });
  await fs.promises.writeFile(tmp, text, { mode: 0o644 });
  await fs.promises.rename(tmp, file);
}

function main(): void {
  program.parse();
  const o = program.opts<{ zone: string[]; resource?: string[]; hostsFile: string; healthPort: string }>();
  const zones = o.zone.map(normaliseZone);
  for (const [i, zone] of zones.entries())
    if (!isDnsName(zone)) throw new Error(`--zone "${o.zone[i] ?? ""}" is not a DNS name`);
  const resources = o.resource ?? [DEFAULT_RESOURCE];
  resources.forEach(parseResource);
  const port = Number(o.healthPort);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new Error(`--health-port "${o.healthPort}" must be a port number (1-65535)`);

  const log = jsonLogger("info");
  // KUBECONFIG or ~/.kube/config outside a cluster; in the pod, its ServiceAccount (in-cluster).
  const kc = new k8s.KubeConfig();
  kc.loadFromDefault();
  // The pod's resolver (the cluster's DNS), with bounded waits: a reconcile waits for new answers.
  const resolver = new dns.promises.Resolver({ timeout: 2000, tries: 2 });
  const watcher = new InstanceNamesWatcher({
    sources: resources.map((r) => claimSource(kc, r)),
    zones,
    resolve: (host) => resolver.resolve4(host),
    write: (text) => writeAtomically(o.hostsFile, text),
    log,
  });

  const server = http.createServer((req, res) => {
    const ok = req.url === "/healthz" || (req.url === "/readyz" && watcher.ready);
    const known = req.url === "/healthz" || req.url === "/readyz";
    res
      .writeHead(ok ? 200 : known ? 503 : 404, { "content-type": "text/plain" })
      .end(ok ? "ok\n" : known ? "the hosts file is not written from a complete list yet\n" : "");
  });
  server.once("error", (e: Error) => {
    log("error", "the health server cannot listen; is --health-port taken?", { port, error: e.message });
    process.exit(1);
  });
  server.listen(port);

  const shutdown = () => {
    log("info", "stopping");
    watcher.stop();
    server.close();
    process.exit(0);
  };
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
  log("info", "instance-names starting", { zones, resources, hostsFile: o.hostsFile, healthPort: port });
  watcher.start();
}

try {
  main();
} catch (e) {
  process.stderr.write(`instance-names: ${(e as Error).message}\n`);
  process.exit(1);
}
